import { resolve } from 'node:path';
import { KEY_ROTATIONS_META_KEY, keyToPin } from '@callgate/core/ledger';
import type { Gateway } from '@callgate/mcp-gateway';
import { CallgateError, isCallgateError } from '@callgate/protocol';
import {
  DEFAULT_MCP_PROFILE,
  prepareSocketPath,
  readPolicyFile,
  readServerConfig,
  type ServerConfig,
  startServer,
  startTelemetry,
} from '@callgate/server';
import type { LogLevel } from '../log.js';
import { startWitnessLoop } from '../witness/loop.js';
import { openServeEngine } from './serve-store.js';
import { readServerAddress, writeServerAddress } from './server-address.js';
import { checkProfile, choosePolicy, lineLogger, startGateway, upstreamLines } from './setup.js';

/** Options of `callgate serve`; flags win over the config file, which wins over defaults. */
export interface ServeOptions {
  config?: string;
  data?: string;
  /** A `postgres://` URL: state in PostgreSQL, shared with other replicas. */
  store?: string;
  /** The log key file every replica reads (with `store`). */
  logKey?: string;
  host?: string;
  port?: number;
  /** A Unix-domain socket's path to listen on instead of a TCP port. */
  socket?: string;
  /** The socket file's permission bits (default 0o600). */
  socketMode?: number;
  policy?: string;
  /** Start a new log beside a log key that has none (a lost or emptied database is refused without it). */
  init?: boolean;
  /** SQLite durability; default `synchronous:` in the config, else NORMAL. */
  synchronous?: 'NORMAL' | 'FULL';
  /** Longest wait for a request's headers, ms (default 10,000): then 408 and the connection closed. */
  headersTimeout?: number;
  /** Longest wait for a whole request, headers and body, ms (default 30,000): then 408 likewise. */
  requestTimeout?: number;
  print: (line: string) => void;
  /** Where log lines go (standard error). */
  log: (line: string) => void;
  /** The lowest level logged; default `info`. */
  logLevel?: LogLevel;
}

/**
 * `callgate serve`: the HTTP API, the approvals inbox, the run timeline and the MCP gateway (in
 * front of the config's `upstreams:`, at `/mcp` and `/mcp/<profile>`) on the embedded default
 * (SQLite in the data folder). Prints the URLs it serves and, when no API key exists yet, how to
 * create one. Resolves with the exit code once the server has shut down (SIGINT or SIGTERM:
 * accepted requests finish, MCP sessions end, upstreams stop, the ledger is flushed, the store
 * closed).
 *
 * @throws CallgateError `request-invalid` for a config that does not validate or a
 *   `mcp.default_profile` the policy lacks, `policy-invalid` for a policy that does not compile.
 */
export async function runServe(options: ServeOptions): Promise<number> {
  const { print } = options;
  const config: ServerConfig = options.config
    ? await readServerConfig(options.config, process.env)
    : { tools: [], upstreams: [] };
  for (const warning of config.warnings ?? []) options.log(`warning: ${warning}`);
  const { policy, source: policySource } = await choosePolicy(config, options.policy, options.log);
  const defaultProfile = config.defaultProfile ?? DEFAULT_MCP_PROFILE;
  checkProfile(policy, defaultProfile, 'mcp.default_profile');
  const dataDir = resolve(options.data ?? config.data ?? '.callgate');
  // `--host`/`--port` on the command line win over a `socket:` in the config (and its
  // `socket_mode:`), as flags do.
  const tcpFlags = options.host !== undefined || options.port !== undefined;
  const configSocket = tcpFlags ? undefined : config.socket;
  const socketMode = options.socketMode ?? (configSocket === undefined ? undefined : config.socketMode);
  if (options.socketMode !== undefined && options.socket === undefined && configSocket === undefined)
    throw new CallgateError(
      'request-invalid',
      '--socket-mode is the mode of a socket file: give --socket (or socket: in the config) too',
    );
  // The socket path is checked (a live server, a file, a missing folder) before the data folder
  // is touched: a refused start leaves nothing behind.
  const requestedSocket = options.socket ?? configSocket;
  const socket = requestedSocket === undefined ? undefined : await prepareSocketPath(requestedSocket);
  const logger = lineLogger(options.log, options.logLevel);
  const store = options.store ?? config.store;
  const logKey = options.logKey ?? config.logKey;
  const embedded = await openServeEngine({
    dataDir,
    ...(store !== undefined ? { store } : {}),
    ...(logKey !== undefined ? { logKey } : {}),
    policy,
    tools: config.tools,
    logger,
    ...(options.init ? { init: true } : {}),
    ...(config.vault !== undefined ? { vault: config.vault } : {}),
    synchronous: options.synchronous ?? config.synchronous ?? 'NORMAL',
  }).catch((error: unknown) => {
    // Another server holds the folder: say where it listens, so it can be used instead.
    const running =
      isCallgateError(error) && error.kind === 'conflict' ? readServerAddress(dataDir) : undefined;
    if (running) throw new CallgateError('conflict', `${(error as Error).message} It serves ${running}.`);
    throw error;
  });
  // On a socket, only this machine connects: the gateway accepts loopback Host headers only.
  const host = socket !== undefined ? 'localhost' : (options.host ?? config.host ?? '127.0.0.1');
  const port = options.port ?? config.port ?? 7420;
  let gateway: Gateway;
  let upstreams: Awaited<ReturnType<typeof startGateway>>['upstreams'];
  // Upstreams can take a while to start (an initialize is awaited up to 30 s): a signal meanwhile
  // stops the processes already started and the store, then exits, as one after start does.
  let starting: Gateway | undefined;
  let interrupted: Promise<never> | undefined;
  const stopStarting = (signal: NodeJS.Signals) => {
    interrupted ??= (async () => {
      logger.info({ signal }, 'shutting down while starting');
      await starting?.close().catch(() => {});
      await embedded.close().catch(() => {});
      print('callgate stopped');
      process.exit(0);
    })();
  };
  process.once('SIGINT', stopStarting);
  process.once('SIGTERM', stopStarting);
  try {
    ({ gateway, upstreams } = await startGateway({
      engine: embedded.engine,
      config,
      logger,
      host,
      onCreated: (created) => {
        starting = created;
      },
    }));
  } catch (error) {
    if (interrupted) await interrupted;
    await embedded.close();
    throw error;
  } finally {
    process.removeListener('SIGINT', stopStarting);
    process.removeListener('SIGTERM', stopStarting);
  }
  if (interrupted) await interrupted;
  // The key to pin: after `callgate log-key rotate`, the first key, which every bundle's rotations
  // lead from (as `log-key show` and `export` name it), not the key the log signs with now.
  const rotations = await embedded.store.getMeta(KEY_ROTATIONS_META_KEY);
  const pin = keyToPin(
    embedded.verifierKey,
    rotations === undefined ? [] : (JSON.parse(rotations) as string[]),
  );
  const telemetry = startTelemetry(process.env);
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer({
      options: {
        engine: embedded.engine,
        publicKey: pin,
        logger,
        gateway,
        defaultProfile,
        dataDir,
        ...policyRereader(options),
        ...(telemetry
          ? { tracing: { tracer: telemetry.tracer, captureContent: telemetry.captureContent } }
          : {}),
        ...(embedded.storeHealth ? { storeHealth: embedded.storeHealth } : {}),
        ...(embedded.sessionBacking ? { sessionBacking: embedded.sessionBacking } : {}),
        ...(config.webhook ? { webhook: config.webhook } : {}),
      },
      host,
      port,
      ...(socket !== undefined ? { socket } : {}),
      ...(socketMode !== undefined ? { socketMode } : {}),
      ...(options.headersTimeout !== undefined ? { headersTimeoutMs: options.headersTimeout } : {}),
      ...(options.requestTimeout !== undefined ? { requestTimeoutMs: options.requestTimeout } : {}),
    });
  } catch (error) {
    await gateway.close();
    await embedded.close();
    await telemetry?.shutdown();
    if (socket !== undefined && isCallgateError(error)) throw error;
    options.log(
      `callgate serve: cannot listen on ${socket ?? `${host}:${port}`}: ${(error as Error).message}`,
    );
    return 1;
  }
  const witnessLoop = config.witnesses
    ? startWitnessLoop({
        store: embedded.store,
        ledger: embedded.engine.ledger,
        witnesses: config.witnesses,
        logger,
      })
    : undefined;
  const forgetAddress = store === undefined ? writeServerAddress(dataDir, running.url) : () => {};
  print(`callgate serving ${running.url}`);
  if (running.socket === undefined) {
    print(`  API        ${running.url}/v1   (OpenAPI: ${running.url}/v1/openapi.json)`);
    print(`  approvals  ${running.url}/ui/approvals`);
    print(`  runs       ${running.url}/ui/runs`);
    print(
      `  MCP        ${running.url}/mcp/<profile>   (${running.url}/mcp is profile ${defaultProfile}; agent key)`,
    );
  } else socketBanner(print, running.socket, socketMode ?? 0o600);
  const [first, ...rest] = upstreamLines(upstreams);
  print(`  upstreams  ${first}`);
  for (const line of rest) print(`             ${line}`);
  print(`  ${store === undefined ? 'data ' : 'store'}      ${embedded.where}`);
  print(`  policy     ${policySource} (${policy.digest})`);
  print(`  tools      ${embedded.engine.registry.specs().length} known`);
  print(`  log key    ${pin}${pin === embedded.verifierKey ? '' : '   (the key to pin; rotated since)'}`);
  if (pin !== embedded.verifierKey) print(`  signs with ${embedded.verifierKey}`);
  if (config.webhook) print(`  webhook    ${config.webhook.url}`);
  if (running.socket === undefined)
    print(
      `  metrics    ${running.url}/metrics   (health ${running.url}/v1/health, readiness ${running.url}/v1/ready)`,
    );
  else print('  metrics    /metrics   (health /v1/health, readiness /v1/ready)');
  if (telemetry) print('  traces     OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT');
  if (config.witnesses) {
    const { quorum, servers } = config.witnesses;
    print(
      `  witnesses  ${servers.map((server) => server.url).join(', ')} (quorum ${quorum ?? servers.length})`,
    );
  }
  const live = (await embedded.store.listApiKeys()).filter((key) => key.revoked_at === undefined);
  if (live.length === 0) {
    print('');
    print('No API key exists yet. Create one (in another terminal; the key is printed once):');
    print(`  callgate keys create --role reviewer --name you ${embedded.keysHint}    # sign in to the inbox`);
    print(`  callgate keys create --role agent --name my-agent ${embedded.keysHint}  # for your agent`);
  }
  print('Press Ctrl+C to stop.');
  await running.closed;
  await telemetry?.shutdown();
  await witnessLoop?.stop();
  // The server closed the engine and its store; this also releases the data folder's writer lock
  // (idempotent for what is already closed).
  await embedded.close();
  forgetAddress();
  print('callgate stopped');
  return 0;
}

/**
 * The lines saying how to reach a server on the socket `path`: a client takes `unix:PATH` itself
 * (not a URL below it), and what only TCP reaches (a browser's inbox, MCP clients) is said so.
 */
function socketBanner(print: (line: string) => void, path: string, mode: number): void {
  print(
    `  socket     ${path}   (mode ${mode.toString(8).padStart(4, '0')}; e.g. curl --unix-socket ${path} http://localhost/v1/health)`,
  );
  print(`  API        /v1 on the socket; clients take CALLGATE_URL=unix:${path}`);
  print('  approvals  not reachable over a socket: a browser needs a TCP port (serve --port)');
  print('  runs       not reachable over a socket: a browser needs a TCP port (serve --port)');
  print(
    '  MCP        not reachable over a socket: the MCP toolset and other MCP clients connect over TCP (serve --port)',
  );
}

/** Where SIGHUP and `POST /v1/admin/policy` read the policy again: the --policy file or the config. */
function policyRereader(options: ServeOptions) {
  if (options.policy) {
    const path = resolve(options.policy);
    return { policySource: async () => ({ policy: await readPolicyFile(path), source: path }) };
  }
  const file = options.config;
  if (!file) return {};
  return {
    policySource: async () => {
      const config = await readServerConfig(file, process.env);
      if (!config.policy)
        throw new CallgateError(
          'request-invalid',
          `${file} no longer names a policy; the policy in force is unchanged`,
        );
      return { policy: config.policy, source: config.policySource ?? file };
    },
  };
}
