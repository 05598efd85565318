import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Gateway, StdioConnection } from '@callgate/mcp-gateway';
import {
  DEFAULT_MCP_PROFILE,
  readServerConfig,
  type ServerConfig,
  startTelemetry,
  traceLedger,
} from '@callgate/server';
import { openEmbedded } from '@callgate/store-sqlite';
import type { LogLevel } from '../log.js';
import { checkProfile, choosePolicy, lineLogger, startGateway, upstreamLines } from './setup.js';

/** Options of `callgate mcp --stdio`; flags win over the config file, which wins over defaults. */
export interface McpStdioOptions {
  config?: string;
  data?: string;
  profile?: string;
  principal?: string;
  /** Where every log line goes (standard error): standard output carries only MCP messages. */
  log: (line: string) => void;
  /** The lowest level logged; default `info`. */
  logLevel?: LogLevel;
  /** The MCP streams; default `process.stdin` and `process.stdout`. */
  stdin?: Readable;
  stdout?: Writable;
}

/** The principal of a stdio session when `--principal` is not given: the OS user's name. */
function defaultPrincipal(): string {
  try {
    return userInfo().username || 'local-user';
  } catch {
    return 'local-user';
  }
}

/**
 * `callgate mcp --stdio`: one MCP session over standard input and output (newline-delimited
 * JSON-RPC, MCP 2025-11-25) for a desktop client, on the embedded engine (SQLite in the data
 * folder) and a gateway in front of the config's `upstreams:`. The session is one run of
 * `principal` through `profile`; it ends when standard input closes (or on SIGINT/SIGTERM),
 * then the upstreams stop and the ledger is flushed. Nothing but MCP messages is written to
 * standard output: every log line goes to `log`.
 *
 * @returns the exit code, 0, once the session has ended and everything is closed.
 * @throws CallgateError `request-invalid` for a config that does not validate or a profile the
 *   policy lacks, `policy-invalid` for a policy that does not compile.
 */
export async function runMcpStdio(options: McpStdioOptions): Promise<number> {
  const { log } = options;
  const config: ServerConfig = options.config
    ? await readServerConfig(options.config, process.env)
    : { tools: [], upstreams: [] };
  for (const warning of config.warnings ?? []) log(`warning: ${warning}`);
  const { policy, source: policySource } = await choosePolicy(config, undefined, log);
  const profile = options.profile ?? config.defaultProfile ?? DEFAULT_MCP_PROFILE;
  checkProfile(policy, profile, options.profile ? '--profile' : 'mcp.default_profile');
  const principal = options.principal ?? defaultPrincipal();
  const dataDir = resolve(options.data ?? config.data ?? '.callgate');
  const logger = lineLogger(log, options.logLevel);
  const embedded = await openEmbedded({
    dataDir,
    policy,
    tools: config.tools,
    logger,
    ...(config.vault !== undefined ? { vault: config.vault } : {}),
  });
  // Spans of its records (no caller's trace context over stdio: each call is a trace of its own).
  const telemetry = startTelemetry(process.env);
  const stopTracing = telemetry
    ? traceLedger(embedded.engine.ledger, {
        tracer: telemetry.tracer,
        captureContent: telemetry.captureContent,
        store: embedded.store,
      })
    : () => {};
  let gateway: Gateway | undefined;
  let connection: StdioConnection | undefined;
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    interrupted = true;
    // While upstreams still start, stopping the gateway stops the processes already started.
    void (connection ? connection.close() : gateway?.close());
  };
  // From the start: upstreams can take a while to start (an initialize is awaited up to 30 s).
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let started: Awaited<ReturnType<typeof startGateway>>;
    try {
      started = await startGateway({
        engine: embedded.engine,
        config,
        logger,
        onCreated: (created) => {
          gateway = created;
        },
      });
    } catch (error) {
      if (interrupted) return 0;
      throw error;
    }
    gateway = started.gateway;
    if (interrupted) return 0;
    logger.info(
      {
        principal,
        profile,
        data: dataDir,
        policy: policySource,
        upstreams: upstreamLines(started.upstreams),
      },
      'callgate mcp: serving MCP over stdio',
    );
    connection = await gateway.connectStdio(
      { principal, profile },
      {
        ...(options.stdin ? { stdin: options.stdin } : {}),
        ...(options.stdout ? { stdout: options.stdout } : {}),
      },
    );
    if (interrupted) await connection.close();
    await connection.closed;
    logger.info({}, 'callgate mcp: the session ended');
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await gateway?.close();
    stopTracing();
    await embedded.close();
    await telemetry?.shutdown();
  }
  return 0;
}
