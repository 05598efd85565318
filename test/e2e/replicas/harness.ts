// Starts several real `callgate serve` processes on one PostgreSQL database, each on 127.0.0.1
// at a free port under the server harness's watchdog: the replicas of one deployment. Keys are
// made once with `callgate keys create --store`, as an operator would.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { freshDatabase } from '../../postgres/database.js';
import { BIN, POLICY_YAML, ROOT, runCallgate, TOOLS_YAML } from '../server/harness.js';

const WATCHDOG = join(dirname(fileURLToPath(import.meta.url)), '../server/watchdog.mjs');

/** One running replica. */
export interface Replica {
  index: number;
  url: string;
  verifierKey: string;
  pid: number;
  output: () => string;
  /** True once its process exited. */
  exited: () => boolean;
  /** SIGKILL, at once (no drain, no flush). */
  kill(): Promise<void>;
  /** SIGTERM and a clean exit; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** A deployment: its replicas, the keys made for it and the folder of its config. */
export interface Deployment {
  replicas: Replica[];
  keys: Record<string, string>;
  dir: string;
  stop(): Promise<void>;
}

/** Creates keys in the shared store with `callgate keys create --store`. */
export async function createKeys(
  storeUrl: string,
  keys: Record<string, 'agent' | 'reviewer' | 'admin'>,
): Promise<Record<string, string>> {
  const made: Record<string, string> = {};
  for (const [name, role] of Object.entries(keys)) {
    const result = await runCallgate(['keys', 'create', '--role', role, '--name', name, '--store', storeUrl]);
    const key = /\b(cg_[A-Za-z0-9_-]{43})\b/.exec(result.stdout)?.[1];
    if (result.code !== 0 || !key) throw new Error(`keys create failed: ${result.stdout}${result.stderr}`);
    made[name] = key;
  }
  return made;
}

/** Starts one `callgate serve --config DIR/callgate.yaml` with the environment `env`. */
export async function startReplica(
  index: number,
  dir: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<Replica> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npm run build)`);
  const child: ChildProcess = spawn(
    process.execPath,
    [WATCHDOG, '300000', process.execPath, BIN, 'serve', '--config', join(dir, 'callgate.yaml'), ...args],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exited = true;
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica ${index} did not start:\n${output}`)), 30_000);
    const check = () => {
      const match = /callgate serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] && output.includes('Press Ctrl+C to stop.')) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`replica ${index} exited:\n${output}`));
    });
  });
  // The watchdog's child is the server (Linux: /proc lists a process's children).
  const watchdog = child.pid as number;
  const pid = Number(
    (await readFile(`/proc/${watchdog}/task/${watchdog}/children`, 'utf8')).trim().split(/\s+/)[0],
  );
  if (!Number.isInteger(pid) || pid <= 0)
    throw new Error(`replica ${index}: no server process under the watchdog`);
  return {
    index,
    url,
    verifierKey: /log key\s+(\S+)/.exec(output)?.[1] ?? '',
    pid,
    output: () => output,
    exited: () => exited,
    async kill() {
      if (exited) return;
      // SIGKILL the server itself (not the watchdog, which would forward a SIGTERM).
      process.kill(pid, 'SIGKILL');
      await exit;
    },
    async stop(timeoutMs = 15_000) {
      if (exited) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Writes callgate.yaml (`store: { url_env: CALLGATE_REPLICA_STORE }`, the policy, the tools,
 * port 0) and starts `count` replicas on the database at `storeUrl`, one after the other (the
 * first creates the schema, the log's origin and key).
 */
export async function startDeployment(options: {
  storeUrl: string;
  count: number;
  keys: Record<string, 'agent' | 'reviewer' | 'admin'>;
  policy?: string;
  /** The rest of callgate.yaml (default: the server harness's tools). */
  config?: string;
  args?: string[];
}): Promise<Deployment> {
  const dir = await mkdtemp(join(tmpdir(), 'callgate-e2e-replicas-'));
  await writeFile(join(dir, 'policy.yaml'), options.policy ?? POLICY_YAML);
  await writeFile(
    join(dir, 'callgate.yaml'),
    `policy: policy.yaml\nstore: { url_env: CALLGATE_REPLICA_STORE }\nhost: 127.0.0.1\nport: 0\n${options.config ?? TOOLS_YAML}`,
  );
  const env = { CALLGATE_REPLICA_STORE: options.storeUrl };
  const keys = await createKeys(options.storeUrl, options.keys);
  const replicas: Replica[] = [];
  for (let index = 0; index < options.count; index++)
    replicas.push(await startReplica(index, dir, env, options.args));
  return {
    replicas,
    keys,
    dir,
    async stop() {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What {@link startDeployment} takes besides the database. */
export type DeploymentOptions = Omit<Parameters<typeof startDeployment>[0], 'storeUrl'>;

/** A deployment of the enclosing `describe` and the fresh database it runs on. */
export interface SuiteDeployment {
  readonly deployment: Deployment;
  readonly database: Awaited<ReturnType<typeof freshDatabase>>;
}

/**
 * A fresh database on the PostgreSQL at `url` and a deployment on it, for the enclosing
 * `describe`: started before its tests (`options` is read then), stopped and the database dropped
 * after them. Hooks a test file adds after this call run before the stop.
 */
export function deploymentPerSuite(url: string, options: () => DeploymentOptions): SuiteDeployment {
  let deployment: Deployment | undefined;
  let database: SuiteDeployment['database'] | undefined;
  beforeAll(async () => {
    database = await freshDatabase(url);
    deployment = await startDeployment({ storeUrl: database.url, ...options() });
  }, 90_000);
  afterAll(async () => {
    await deployment?.stop();
    await database?.drop();
  }, 60_000);
  return {
    get deployment() {
      if (!deployment) throw new Error('the deployment has not started');
      return deployment;
    },
    get database() {
      if (!database) throw new Error('the database has not been made');
      return database;
    },
  };
}
