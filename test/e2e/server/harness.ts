// Starts a real `callgate serve` process on 127.0.0.1 (a free port) over a fresh data folder,
// with keys made by `callgate keys create`, the way a user would. The server runs under a
// watchdog so it stops by itself if the test process dies.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(here, '../../..');
/** The CLI's entry script: the build's, unless CALLGATE_CLI_SCRIPT names another. */
export const BIN = process.env.CALLGATE_CLI_SCRIPT ?? join(ROOT, 'packages/cli/dist/bin.js');
const WATCHDOG = join(here, 'watchdog.mjs');
/**
 * The Node.js that runs the CLI: `CALLGATE_NODE` (e.g. `node`, the Node 20 line a test on
 * Node 22 needs for the server's native modules), else this process's own.
 */
export const cliNode = () => process.env.CALLGATE_NODE ?? process.execPath;

export const TOOLS_YAML = `
tools:
  - name: read_file
    inputSchema: { type: object, properties: { path: { type: string } }, required: [path], additionalProperties: false }
    annotations: { readOnlyHint: true }
  - name: send_invoice
    inputSchema:
      type: object
      properties: { to: { type: string }, amount: { type: number } }
      required: [to, amount]
      additionalProperties: false
    annotations: { destructiveHint: true }
  - name: delete_file
    inputSchema: { type: object, properties: { path: { type: string } }, required: [path] }
    annotations: { destructiveHint: true }
`;

export const POLICY_YAML = `
version: 1
default: deny
approval: { ttl: 60s, wait: 2m }
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
`;

/** A running server. */
export interface ServerProcess {
  url: string;
  /** The folder holding callgate.yaml, the policy and the data folder (removed by `stop`). */
  dir: string;
  /** The log's verifier key as printed by `callgate serve`. */
  verifierKey: string;
  dataDir: string;
  keys: Record<string, string>;
  output: () => string;
  /** Sends a signal to the server (through its watchdog), e.g. SIGHUP to reload the policy. */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then waits for a clean exit (SIGKILL after `timeoutMs`). Resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Resolves with the exit code once the server (its watchdog) exited, by any cause; the folder stays. */
  exited: Promise<number | null>;
}

/** Runs `callgate ARGS` to completion (without blocking this process): its exit code and output. */
export function runCallgate(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    execFile(
      cliNode(),
      [BIN, ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolveRun({ code, stdout, stderr });
      },
    );
  });
}

async function callgate(args: string[]): Promise<string> {
  const result = await runCallgate(args);
  if (result.code !== 0) {
    throw new Error(`callgate ${args.join(' ')} failed (${result.code}): ${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

/**
 * Creates keys (`name: role`), then starts `callgate serve --config` on a free port and waits
 * until it prints its URL. The config is `policy: policy.yaml` (`options.policy`, default
 * {@link POLICY_YAML}), `data: data`, host 127.0.0.1, port 0, then `options.config` (default
 * {@link TOOLS_YAML}).
 */
export async function startCallgate(options: {
  keys: Record<string, 'agent' | 'reviewer' | 'admin'>;
  maxLifetimeMs?: number;
  policy?: string;
  config?: string;
  /** More `callgate serve` arguments, after `--config`. */
  arguments?: string[];
  /** Extra environment variables of the server process. */
  env?: Record<string, string>;
  /** Start again on this stopped (or crashed) server's folder, data and keys. */
  again?: ServerProcess;
}): Promise<ServerProcess> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npm run build)`);
  const dir = options.again?.dir ?? (await mkdtemp(join(tmpdir(), 'callgate-e2e-server-')));
  const dataDir = join(dir, 'data');
  if (!options.again) {
    await writeFile(join(dir, 'policy.yaml'), options.policy ?? POLICY_YAML);
    await writeFile(
      join(dir, 'callgate.yaml'),
      `policy: policy.yaml\ndata: data\nhost: 127.0.0.1\nport: 0\n${options.config ?? TOOLS_YAML}`,
    );
  }
  const keys: Record<string, string> = { ...options.again?.keys };
  for (const [name, role] of Object.entries(options.again ? {} : options.keys)) {
    const printed = await callgate(['keys', 'create', '--role', role, '--name', name, '--data', dataDir]);
    const key = /\b(cg_[A-Za-z0-9_-]{43})\b/.exec(printed)?.[1];
    if (!key) throw new Error(`no key in: ${printed}`);
    keys[name] = key;
  }
  const child: ChildProcess = spawn(
    process.execPath,
    [
      WATCHDOG,
      String(options.maxLifetimeMs ?? 300_000),
      cliNode(),
      BIN,
      'serve',
      '--config',
      join(dir, 'callgate.yaml'),
      ...(options.arguments ?? []),
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`callgate serve did not start:\n${output}`)), 20_000);
    const check = () => {
      const match = /callgate serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] && output.includes('Press Ctrl+C to stop.')) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout?.on('data', check);
    void exited.then(() => reject(new Error(`callgate serve exited:\n${output}`)));
  });
  const verifierKey = /log key\s+(\S+)/.exec(output)?.[1] ?? '';
  return {
    url,
    dir,
    verifierKey,
    dataDir,
    keys,
    output: () => output,
    exited,
    signal: (signal) => {
      child.kill(signal);
    },
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      await rm(dir, { recursive: true, force: true });
      return code;
    },
  };
}
