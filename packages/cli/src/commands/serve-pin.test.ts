// `callgate serve` names the key to pin as `log-key show` and `export` do: after a rotation, the
// first key (which every bundle's rotations lead from), and the key it signs with beside it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLedger, rotateLogKey } from '@callgate/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = new URL('../../dist/bin.js', import.meta.url).pathname;
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Starts `callgate serve` on `dataDir`, collects its output until `until` matches it, then stops it. */
function serveLines(dataDir: string, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--data', dataDir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const stop = setTimeout(() => child.kill('SIGTERM'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (until.test(output)) child.kill('SIGTERM');
    });
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(stop);
      resolve(output);
    });
  });
}

describe('callgate serve: the log key it prints', () => {
  it('is the first key after a rotation, with the key it signs with on the next line', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callgate-serve-pin-'));
    folders.push(dataDir);
    const first = await openLedger(dataDir, undefined, 'test');
    const firstKey = first.signer.verifierKey;
    await first.close();
    const before = await serveLines(dataDir, /log key .*\n/);
    expect(before).toContain(`  log key    ${firstKey}\n`);
    expect(before).not.toContain('signs with');

    const rotated = await rotateLogKey(dataDir);
    const after = await serveLines(dataDir, /signs with .*\n/);
    expect(after).toContain(`  log key    ${firstKey}   (the key to pin; rotated since)\n`);
    expect(after).toContain(`  signs with ${rotated.newKey}\n`);
  });
});
