import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serializeBundle, verifyBundleText, witnessSignerFromPrivateKey } from '@callgate/core/ledger';
import { buildBundleFixture } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callgate } from '../test-support.js';
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
      expect(out[0], name).toMatch(/^callgate verify: .* is not a bundle: it is not JSON: /);
    }
    const out: string[] = [];
    expect(await runVerify(join(folder, 'absent.json'), { out: (line) => out.push(line) })).toBe(2);
    expect(out[0]).toMatch(/cannot read/);
  });

  it('exits 2 for a malformed --witness or --public-key, 1 for a witness that did not cosign', async () => {
    const file = join(folder, 'witnessed.json');
    await writeFile(file, text);
    const witness = witnessSignerFromPrivateKey('witness.example', new Uint8Array(32).fill(7)).verifierKey;
    const garbage = await callgate(['verify', file, '--witness', 'garbage']);
    expect(garbage.code).toBe(2);
    expect(garbage.lines.join('\n')).toMatch(/--witness "garbage" is not a witness key/);
    const badKey = await callgate(['verify', file, '--public-key', 'garbage']);
    expect(badKey.code).toBe(2);
    expect(badKey.lines.join('\n')).toMatch(/--public-key is not a verifier key/);
    const uncosigned = await callgate(['verify', file, '--witness', witness]);
    expect(uncosigned.code).toBe(1);
    expect(uncosigned.lines.join('\n')).toMatch(/FAIL witness: .*0 valid cosignature/);
  });

  it('exits 2 for a --quorum the --witness keys given cannot meet, naming both options', async () => {
    const file = join(folder, 'quorum.json');
    await writeFile(file, text);
    const alone = await callgate(['verify', file, '--quorum', '2']);
    expect(alone.code).toBe(2);
    expect(alone.lines.join('\n')).toMatch(/option '--quorum <n>' needs option '--witness <key>'/);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        async (given, quorum) => {
          const witnesses = Array.from(
            { length: given },
            (_, index) =>
              witnessSignerFromPrivateKey(`w${index}`, new Uint8Array(32).fill(index + 1)).verifierKey,
          );
          const out: string[] = [];
          const code = await runVerify(file, { witness: witnesses, quorum, out: (line) => out.push(line) });
          if (quorum > given) {
            expect(code).toBe(2);
            expect(out.join('\n')).toContain(`--quorum ${quorum} cannot be met by ${given} --witness key`);
          } else {
            // Usable arguments: the bundle carries no cosignatures, so it is a verification failure.
            expect(code).toBe(1);
            expect(out.join('\n')).toMatch(/FAIL witness/);
          }
        },
      ),
      { numRuns: 15 },
    );
  });
});
