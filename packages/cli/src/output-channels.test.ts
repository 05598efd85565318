// One output rule for every command (docs/operations.md, "Output"): a command's result goes to
// standard output; errors, refusals and warnings to standard error, so `callgate verify … > report`
// never hides why it failed. Table-driven over the commands and their failure modes, run as a user
// runs them (the built binary, dist/bin.js): a failure whose message lands on standard output
// fails here.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey, createApp, startServer } from '@callgate/server';
import { memoryEngine, POLICY } from '@callgate/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = new URL('../dist/bin.js', import.meta.url).pathname;
const WIRE = new URL('../../../test/fixtures/wire/', import.meta.url).pathname;
const RUN = '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51';
const APPROVAL = 'apr_0000000000000000';

const folder = mkdtempSync(join(tmpdir(), 'callgate-output-'));
const data = join(folder, 'data');
const missing = join(folder, 'no-such-folder');
const policyFile = join(folder, 'policy.yaml');
const badPolicy = join(folder, 'bad-policy.yaml');
const cases = join(folder, 'cases.yaml');
const bundle = join(WIRE, 'bundle-v1.json');
const pin = readFileSync(join(WIRE, 'bundle-v1.public-key.txt'), 'utf8').trim();
writeFileSync(policyFile, POLICY);
writeFileSync(badPolicy, 'rules: [ {');
writeFileSync(cases, `policy: ${badPolicy}\ncases: []\n`);

/** `callgate ARGS` as a process, CALLGATE_* unset: its exit code and both streams. */
function callgate(
  args: string[],
  stdin = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('CALLGATE_')),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

let server: Awaited<ReturnType<typeof startServer>>;
let adminKey: string;
let busy: Server;
let busyPort: number;
beforeAll(async () => {
  const { engine, publicKey } = await memoryEngine();
  adminKey = (await createApiKey(engine.store, { role: 'admin', name: 'admin' })).key;
  server = await startServer({ app: createApp({ engine, publicKey }), port: 0, signals: [] });
  busy = createServer();
  await new Promise<void>((listening) => busy.listen(0, '127.0.0.1', listening));
  busyPort = (busy.address() as { port: number }).port;
  // A data folder with one admin key, as `callgate keys create` leaves it.
  const created = await callgate(['keys', 'create', '--role', 'admin', '--name', 'root', '--data', data]);
  expect(created.code, created.stderr).toBe(0);
});
afterAll(async () => {
  await server.close();
  await new Promise((closed) => busy.close(closed));
  rmSync(folder, { recursive: true, force: true });
});

interface Failure {
  args: string[];
  stdin?: string;
  code: number;
  /** What standard error says (the message, naming what went wrong). */
  says: RegExp;
}

/** Every command's failure modes: each exits non-zero with its message on standard error alone. */
const FAILURES: Array<() => Failure> = [
  () => ({
    args: ['keys', 'revoke', 'nosuch', '--data', data],
    code: 1,
    says: /no live API key named nosuch/,
  }),
  () => ({
    args: ['keys', 'revoke', 'root', '--data', data],
    code: 1,
    says: /last admin key cannot be revoked/,
  }),
  () => ({
    args: ['keys', 'create', '--role', 'admin', '--name', 'root', '--data', data],
    code: 1,
    says: /an API key named root exists/,
  }),
  () => ({
    args: ['keys', 'create', '--role', 'admin', '--name', 'has space', '--data', data],
    code: 2,
    says: /key name "has space"/,
  }),
  () => ({ args: ['keys', 'list', '--data', missing], code: 2, says: /no callgate data in/ }),
  () => ({ args: ['runs', 'show', 'nope', '--data', data], code: 1, says: /no run nope in/ }),
  () => ({ args: ['runs', 'list', '--data', missing], code: 2, says: /no callgate data in/ }),
  () => ({ args: ['export', '--run', RUN, '--data', data], code: 1, says: /no run / }),
  () => ({ args: ['log-key', 'show', '--data', missing], code: 2, says: /no callgate data in/ }),
  () => ({ args: ['policy', 'reload', '--url', server.url], code: 1, says: /unauthorized: .*--key/ }),
  () => ({
    args: ['policy', 'reload', '--url', server.url, '--key', adminKey, '--file', badPolicy],
    code: 2,
    says: /policy reload: policy-invalid: /,
  }),
  () => ({
    args: ['policy', 'reload', '--url', server.url, '--key', adminKey, '--file', missing],
    code: 2,
    says: /cannot read /,
  }),
  () => ({ args: ['policy', 'test', cases], code: 2, says: /callgate policy test: / }),
  () => ({ args: ['policy', 'test', missing], code: 2, says: /cannot read / }),
  () => ({
    args: ['policy', 'replay', '--policy', policyFile, '--data', data, '--runs', RUN],
    code: 1,
    says: /policy replay: no run /,
  }),
  () => ({
    args: ['policy', 'replay', '--policy', missing, '--data', data],
    code: 2,
    says: /policy replay: /,
  }),
  () => ({ args: ['verify', '-'], stdin: '', code: 2, says: /callgate verify: standard input / }),
  () => ({
    args: ['verify', '--public-key', 'garbage', bundle],
    code: 2,
    says: /--public-key is not a verifier key/,
  }),
  () => ({ args: ['verify', missing], code: 2, says: /callgate verify: / }),
  () => ({ args: ['verify', '-'], stdin: 'not json', code: 2, says: /standard input is not a bundle/ }),
  () => ({
    args: ['approvals', 'show', APPROVAL, '--url', server.url, '--key', adminKey],
    code: 1,
    says: /approvals show: not-found: /,
  }),
  () => ({ args: ['approvals', 'list', '--url', server.url], code: 1, says: /unauthorized: / }),
  () => ({ args: ['witness', 'key', '--data', ''], code: 2, says: /the option is required/ }),
  () => ({ args: ['runs', 'list', '--no-such-option'], code: 2, says: /unknown option/ }),
  () => ({
    args: ['serve', '--data', join(folder, 'serve'), '--port', String(busyPort)],
    code: 1,
    says: /warning: no policy given[\s\S]*callgate serve: cannot listen on 127\.0\.0\.1:\d+/,
  }),
];

describe('where a command writes', () => {
  it('a failure: exit code not 0, the message on standard error, nothing on standard output', async () => {
    const seen: Array<{ row: string; code: number | null; says: boolean; stdout: string }> = [];
    const expected: typeof seen = [];
    for (const failure of FAILURES) {
      const { args, stdin, code, says } = failure();
      const result = await callgate(args, stdin);
      const row = args.join(' ');
      seen.push({ row, code: result.code, says: says.test(result.stderr), stdout: result.stdout });
      expected.push({ row, code, says: true, stdout: '' });
    }
    expect(seen).toEqual(expected);
  }, 180_000);

  it('a result, even a bundle that fails its checks: on standard output, standard error empty', async () => {
    const failed = await callgate(['verify', '--public-key', pin, '--expect-size', '1000000', bundle]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAILED: /m);
    expect(failed.stderr).toBe('');
    const passed = await callgate(['verify', '--public-key', pin, bundle]);
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(/^OK: /m);
    expect(passed.stderr).toBe('');
    const listed = await callgate(['keys', 'list', '--data', data]);
    expect(listed.code).toBe(0);
    // The refused revocation of the last admin key left it live.
    expect(listed.stdout).toMatch(/^root +admin +created \S+ +live$/m);
    expect(listed.stderr).toBe('');
  }, 60_000);
});
