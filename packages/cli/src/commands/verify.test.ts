import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serializeBundle, verifyBundleText } from '@callgate/core/ledger';
import { buildBundleFixture } from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { runVerify } from './verify.js';

const { bundle } = await buildBundleFixture();
const text = serializeBundle(bundle);
const folder = await mkdtemp(join(tmpdir(), 'callgate-verify-'));

/** Runs `callgate verify` on a file holding `content`; returns its exit code and output. */
async function verifyFile(content: string, name: string): Promise<{ code: number; out: string[] }> {
  const file = join(folder, name);
  await writeFile(file, content);
  const out: string[] = [];
  const code = await runVerify(file, { out: (line) => out.push(line) });
  return { code, out };
}

describe('callgate verify FILE', () => {
  it('exits 0 for a bundle that verifies, as verifyBundleText reports it', async () => {
    expect(verifyBundleText(text).ok).toBe(true);
    const { code, out } = await verifyFile(text, 'ok.json');
    expect(code).toBe(0);
    expect(out.at(-1)).toMatch(/^OK: /);
  });

  it('exits 1 for a record line that is JSON but not canonical', async () => {
    const lines = text.split('\n');
    lines[1] = (lines[1] as string).replace('":', '": ');
    const { code, out } = await verifyFile(lines.join('\n'), 'spaced.json');
    expect(code).toBe(1);
    expect(out.join('\n')).toMatch(/FAIL canonical: bundle: line 2 of the bundle/);
  });

  it('exits 2 for a file that is not JSON, in a record line or anywhere, and for no file', async () => {
    const lines = text.split('\n');
    lines[2] = (lines[2] as string).slice(5);
    for (const [content, name] of [
      [lines.join('\n'), 'broken-line.json'],
      ['not json', 'text.json'],
      [text.slice(0, -10), 'cut.json'],
    ] as const) {
      const { code, out } = await verifyFile(content, name);
      expect(code, name).toBe(2);
      expect(out[0], name).toMatch(/^callgate verify: cannot read .*: /);
    }
    const out: string[] = [];
    expect(await runVerify(join(folder, 'absent.json'), { out: (line) => out.push(line) })).toBe(2);
    expect(out[0]).toMatch(/cannot read/);
  });
});
