// The faults of the data folder and malformed JSON-RPC, against the real `callgate` binary.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCallgate } from './harness.js';

const BIN = new URL('../../../packages/cli/dist/bin.js', import.meta.url).pathname;
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
const folder = () => {
  const path = mkdtempSync(join(tmpdir(), 'callgate-hostile-'));
  folders.push(path);
  return path;
};

/** Runs `callgate mcp --stdio` on `lines`; resolves with every JSON line it answered. */
function mcpStdio(dataDir: string, lines: string[]): Promise<Array<Record<string, unknown>>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--stdio', '--data', dataDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split('\n').filter(Boolean).length >= lines.length) child.stdin.end();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(
        out
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      );
    });
    for (const line of lines) child.stdin.write(`${line}\n`);
  });
}

describe('the callgate binary under hostile input and a damaged data folder', () => {
  it('callgate mcp --stdio answers every malformed line, batch and wrong-typed param', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const answers = await mcpStdio(folder(), [
      JSON.stringify(initialize),
      '{not json',
      '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
      '{"id":3,"method":"ping"}',
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}',
      '{"jsonrpc":"2.0","id":5,"method":"ping"}',
    ]);
    const byCode = (code: number) =>
      answers.filter((answer) => (answer.error as { code?: number })?.code === code);
    expect(byCode(-32700)).toHaveLength(1);
    expect(byCode(-32600)).toEqual([
      expect.objectContaining({ id: null }),
      expect.objectContaining({ id: 3 }),
    ]);
    expect(byCode(-32602)).toEqual([expect.objectContaining({ id: 4 })]);
    expect(answers.find((answer) => answer.id === 5)).toMatchObject({ result: {} });
  }, 30_000);

  it('callgate serve refuses a log whose key is gone, naming the key, and a key without its log unless --init', async () => {
    const dataDir = folder();
    // A log: keys create opens the folder and binds it to a new key; export would need a run.
    expect(
      (await runCallgate(['keys', 'create', '--role', 'admin', '--name', 'a', '--data', dataDir])).code,
    ).toBe(0);
    rmSync(join(dataDir, 'log-key.json'));
    const missing = await runCallgate(['serve', '--data', dataDir, '--port', '0']);
    expect(missing.code).not.toBe(0);
    expect(`${missing.stdout}${missing.stderr}`).toMatch(
      /log-key\.json is missing: the log expects log key ed25519:/,
    );

    const keyOnly = folder();
    expect(
      (await runCallgate(['keys', 'create', '--role', 'admin', '--name', 'a', '--data', keyOnly])).code,
    ).toBe(0);
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(keyOnly, `callgate.db${suffix}`), { force: true });
    const refused = await runCallgate(['serve', '--data', keyOnly, '--port', '0']);
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}${refused.stderr}`).toMatch(
      /has a log key but no callgate\.db: .*`callgate serve --init`/,
    );
  }, 60_000);
});
