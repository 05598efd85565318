import { resolve } from 'node:path';
import { type Logger, loadPolicy, type Policy } from '@callgate/core';
import {
  DENY_ALL_POLICY_TEXT,
  readPolicyFile,
  readServerConfig,
  type ServerConfig,
  startServer,
} from '@callgate/server';
import { openEmbedded } from '@callgate/store-sqlite';
import { type Command, InvalidArgumentError, Option } from 'commander';

/** Options of `callgate serve`; flags win over the config file, which wins over defaults. */
export interface ServeOptions {
  config?: string;
  data?: string;
  host?: string;
  port?: number;
  policy?: string;
  print: (line: string) => void;
  /** Where log lines go (standard error). */
  log: (line: string) => void;
}

/** A logger writing one JSON line per event (info and above) to `write`. */
function lineLogger(write: (line: string) => void): Logger {
  const emit = (level: string) => (fields: Record<string, unknown>, message: string) =>
    write(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }));
  return { debug() {}, info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/**
 * `callgate serve`: the HTTP API, the approvals inbox and the run timeline on the embedded
 * default (SQLite in the data folder). Prints the URLs it serves and, when no API key exists
 * yet, how to create one. Resolves with the exit code once the server has shut down (SIGINT or
 * SIGTERM: accepted requests finish, the ledger is flushed, the store closed).
 */
export async function runServe(options: ServeOptions): Promise<number> {
  const { print } = options;
  const config: ServerConfig = options.config
    ? await readServerConfig(options.config, process.env)
    : { tools: [] };
  let policy: Policy;
  let policySource: string;
  if (options.policy) {
    policy = await readPolicyFile(resolve(options.policy));
    policySource = resolve(options.policy);
  } else if (config.policy) {
    policy = config.policy;
    policySource = config.policySource ?? 'config';
  } else {
    policy = loadPolicy(DENY_ALL_POLICY_TEXT, { source: 'default policy' });
    policySource = 'default (deny everything)';
    print('warning: no policy given (--policy FILE or policy: in --config): every tool call will be denied');
  }
  const dataDir = resolve(options.data ?? config.data ?? '.callgate');
  const logger = lineLogger(options.log);
  const embedded = await openEmbedded({
    dataDir,
    policy,
    tools: config.tools,
    logger,
    ...(config.vault !== undefined ? { vault: config.vault } : {}),
  });
  const host = options.host ?? config.host ?? '127.0.0.1';
  const port = options.port ?? config.port ?? 7420;
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer({
      options: {
        engine: embedded.engine,
        publicKey: embedded.verifierKey,
        logger,
        ...(config.webhook ? { webhook: config.webhook } : {}),
      },
      host,
      port,
    });
  } catch (error) {
    await embedded.close();
    print(`callgate serve: cannot listen on ${host}:${port}: ${(error as Error).message}`);
    return 1;
  }
  print(`callgate serving ${running.url}`);
  print(`  API        ${running.url}/v1   (OpenAPI: ${running.url}/v1/openapi.json)`);
  print(`  approvals  ${running.url}/ui/approvals`);
  print(`  runs       ${running.url}/ui/runs`);
  print(`  data       ${dataDir}`);
  print(`  policy     ${policySource} (${policy.digest})`);
  print(`  tools      ${embedded.engine.registry.specs().length} known`);
  print(`  log key    ${embedded.verifierKey}`);
  if (config.webhook) print(`  webhook    ${config.webhook.url}`);
  const live = (await embedded.store.listApiKeys()).filter((key) => key.revoked_at === undefined);
  if (live.length === 0) {
    print('');
    print('No API key exists yet. Create one (in another terminal; the key is printed once):');
    print(`  callgate keys create --role reviewer --name you --data ${dataDir}    # sign in to the inbox`);
    print(`  callgate keys create --role agent --name my-agent --data ${dataDir}  # for your agent`);
  }
  print('Press Ctrl+C to stop.');
  await running.closed;
  print('callgate stopped');
  return 0;
}

function portNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new InvalidArgumentError('expected a port, 0 to 65535');
  return parsed;
}

/** Registers `callgate serve` on the program. */
export function registerServeCommand(
  program: Command,
  context: { print: (line: string) => void; setExitCode: (code: number) => void; exitCodes: string },
): void {
  program
    .command('serve')
    .description('serve the HTTP API, the approvals inbox and the run timeline (SQLite in the data folder)')
    .option('--config <file>', 'callgate.yaml: policy, tools, data, host, port, webhook, vault')
    .addOption(
      new Option('--data <dir>', 'data folder (default .callgate, or data: in the config)').env(
        'CALLGATE_DATA',
      ),
    )
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default 7420)', portNumber)
    .option('--policy <file>', 'policy file (YAML); default: deny everything')
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      context.setExitCode(
        await runServe({
          ...options,
          print: context.print,
          log: (line) => process.stderr.write(`${line}\n`),
        }),
      ),
    );
}
