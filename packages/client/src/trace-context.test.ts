// The client sends the caller's W3C trace context when the application runs an OpenTelemetry
// SDK (here: the SDK's AsyncLocalStorage context manager and W3C propagator), and nothing without.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { context, propagation, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallgateClient } from './client.js';

const seen: IncomingHttpHeaders[] = [];
const server = createServer((request, response) => {
  seen.push(request.headers);
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"test"}');
});
let url: string;

beforeAll(async () => {
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
  context.disable();
  propagation.disable();
});

describe('trace context on requests', () => {
  it('sends no traceparent without an OpenTelemetry SDK, and the active span’s with one', async () => {
    const client = new CallgateClient({ url });
    await client.health();
    expect(seen.at(-1)?.traceparent).toBeUndefined();

    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
    });
    await context.with(parent, () => client.health());
    expect(seen.at(-1)?.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });
});
