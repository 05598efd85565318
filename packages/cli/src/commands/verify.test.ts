import { mkdtemp, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import {
  MAX_BUNDLE_BYTES,
  serializeBundle,
  verifyBundleText,
  witnessSignerFromPrivateKey,
} from '@callgate/core/ledger';
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
  const code = await runVerify(file, { out: (line) => out.push(line), err: (line) => out.push(line) });
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
    expect(
      await runVerify(join(folder, 'absent.json'), {
        out: (line) => out.push(line),
        err: (line) => out.push(line),
      }),
    ).toBe(2);
    expect(out[0]).toMatch(/absent\.json cannot be read: ENOENT/);
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
          const code = await runVerify(file, {
            witness: witnesses,
            quorum,
            out: (line) => out.push(line),
            err: (line) => out.push(line),
          });
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

  it('exits 2 for a witness given twice (the same vkey, or its key under another name): a quorum counts witnesses', async () => {
    const file = join(folder, 'twice.json');
    await writeFile(file, text);
    const seed = new Uint8Array(32).fill(7);
    const key = witnessSignerFromPrivateKey('w7', seed).verifierKey;
    const renamed = witnessSignerFromPrivateKey('w7-again', seed).verifierKey;
    for (const second of [key, renamed]) {
      const twice = await callgate(['verify', file, '--witness', key, '--witness', second, '--quorum', '2']);
      expect(twice.code).toBe(2);
      expect(twice.lines.join('\n')).toContain('is the same witness as --witness');
    }
  });

  it('exits 2 for an empty or blank --public-key, naming it, instead of trusting the bundle’s own key', async () => {
    const file = join(folder, 'empty-key.json');
    await writeFile(file, text);
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[ \t\n\r]{0,4}$/), async (blank) => {
        const { code, lines } = await callgate(['verify', file, '--public-key', blank]);
        expect(code).toBe(2);
        expect(lines.join('\n')).toContain("option '--public-key <key>' argument");
        expect(lines.join('\n')).toContain('expected a value, not an empty one');
        expect(lines.join('\n')).not.toMatch(/^OK: /m);
      }),
      { numRuns: 10 },
    );
    // Called as a library, an empty key is no key either.
    const out: string[] = [];
    expect(
      await runVerify(file, { publicKey: '', out: (line) => out.push(line), err: (line) => out.push(line) }),
    ).toBe(2);
    expect(out[0]).toMatch(/--public-key is not a verifier key/);
  });

  it('reads standard input for -, by the same rule as a file', async () => {
    const out: string[] = [];
    const read = (bytes: Buffer) =>
      runVerify('-', {
        stdin: Readable.from([bytes]),
        out: (line) => out.push(line),
        err: (line) => out.push(line),
      });
    expect(await read(Buffer.from(text))).toBe(0);
    expect(out.at(-1)).toMatch(/^OK: /);
    expect(await read(gzipSync(text))).toBe(2);
    expect(out.at(-1)).toMatch(/^callgate verify: standard input is not a bundle: it is gzip-compressed/);
  });

  it('refuses a file larger than it reads, unread, naming the bound', async () => {
    const file = join(folder, 'sparse.json');
    await writeFile(file, '');
    // Sparse: takes no room on disk, but says it is one byte past the bound.
    await truncate(file, MAX_BUNDLE_BYTES + 1);
    const out: string[] = [];
    expect(await runVerify(file, { out: (line) => out.push(line), err: (line) => out.push(line) })).toBe(2);
    expect(out).toEqual([
      `callgate verify: ${file} is larger than 511 MiB, the most verify reads (a bundle is read whole; export fewer runs a bundle)`,
    ]);
  });

  it('says what a bundle of other JSON, gzip or UTF-16 is (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue().filter((value) => typeof value !== 'object' || value === null || Array.isArray(value)),
        async (value) => {
          const { code, out } = await verifyFile(`${JSON.stringify(value)}\n`, 'other.json');
          expect(code).toBe(1);
          expect(out[0]).toMatch(/^FAIL bundle-shape: bundle: the bundle is not a JSON object but /);
        },
      ),
      { numRuns: 30 },
    );
    const utf16 = join(folder, 'utf16.json');
    await writeFile(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const out: string[] = [];
    expect(await runVerify(utf16, { out: (line) => out.push(line), err: (line) => out.push(line) })).toBe(2);
    expect(out[0]).toMatch(/is not a bundle: it is UTF-16 text \(byte-order mark FF FE, little-endian\)/);
  });
});
