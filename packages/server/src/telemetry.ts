// The OpenTelemetry SDK for `callgate serve`: traces exported over OTLP/HTTP (protobuf) when the
// standard environment variables ask for it. Libraries of callgate only use `@opentelemetry/api`;
// this is the one place that installs the SDK.
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SERVER_VERSION } from './version.js';

/** The installed SDK: the tracer to hand to `createApp`, and the way to flush and stop it. */
export interface Telemetry {
  tracer: Tracer;
  /** Whether arguments and results may go into spans (see {@link startTelemetry}). */
  captureContent: boolean;
  /** Exports what is buffered (tests, shutdown). */
  flush(): Promise<void>;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * Installs the OpenTelemetry SDK (global tracer provider, AsyncLocalStorage context, W3C trace
 * context propagation) when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set (and `OTEL_SDK_DISABLED` is not `true`), exporting spans over OTLP/HTTP protobuf to
 * `<endpoint>/v1/traces` (or the traces endpoint as given). The exporter reads the other standard
 * variables itself (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, `…_COMPRESSION`); the resource
 * takes `OTEL_SERVICE_NAME` (default `callgate`) and `OTEL_RESOURCE_ATTRIBUTES`.
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` lets arguments and results (from the
 * vault) go into spans; they never do otherwise.
 *
 * @param env the environment to read (pass `process.env`).
 * @returns undefined when tracing is not asked for.
 */
export function startTelemetry(env: Record<string, string | undefined>): Telemetry | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!traces && !base) return undefined;
  const url = traces ?? `${(base ?? '').replace(/\/+$/, '')}/v1/traces`;
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME ?? 'callgate',
    'service.version': SERVER_VERSION,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  provider.register();
  return {
    tracer: provider.getTracer('callgate', SERVER_VERSION),
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true',
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
