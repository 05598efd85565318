import type { BundleV3, LedgerRecord } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEd25519KeyPair, sha256 } from '../../crypto.js';
import { Engine } from '../../gate/engine.js';
import { fastCanonicalJson } from '../../json/canonical.js';
import { loadPolicy } from '../../policy/index.js';
import { MemoryStore } from '../../store/memory-store.js';
import { ARGUMENTS_SECRET_META_KEY } from '../arguments-key.js';
import { isCanonicalLine, parseBundleText, serializeBundle } from '../bundle-text.js';
import { Ledger } from '../ledger.js';
import { canonicalOfParsed } from '../plain-canonical.js';
import { sealRecord } from '../record.js';
import { logSignerFromPrivateKey } from '../signed-note.js';
import { fixtureClock } from '../testing/fixture.js';
import { verifyBundle, verifyBundleText } from './verify-bundle.js';

const ORIGIN = 'v3.test/log';
const signer = logSignerFromPrivateKey(ORIGIN, sha256('v3 test key'));
const pinned = { publicKey: signer.verifierKey };

async function openLog(store = new MemoryStore()) {
  return Ledger.open(store, { signer, origin: ORIGIN, clock: fixtureClock(), checkpointEveryRecords: 4 });
}

/** A run still in progress: 12 records, checkpoints every 4, and another run's records between. */
async function openRunBundle(): Promise<{ bundle: BundleV3; ledger: Ledger }> {
  const ledger = await openLog();
  await ledger.append('run-a', { type: 'run-start', principal: 'p', framework: 'f', labels: {} });
  await ledger.append('run-b', { type: 'run-start', principal: 'q', framework: 'f', labels: {} });
  for (let index = 1; index < 12; index++) {
    await ledger.append('run-a', {
      type: 'model-message',
      role: 'user',
      content_commitment: `sha256:${sha256(`m${index}`).toString('hex')}`,
      tool_calls: [],
    });
    if (index % 3 === 0)
      await ledger.append('run-b', { type: 'gap', reason: 'r', from_ts: 0, to_ts: 1, calls: 0 });
  }
  return { bundle: (await ledger.exportRun('run-a')) as BundleV3, ledger };
}

const checks = (report: ReturnType<typeof verifyBundle>) => report.failures.map((failure) => failure.check);

describe('callgate-bundle/3', () => {
  it('is what an export writes: version 2 records, a signed manifest, nothing unsigned', async () => {
    const { bundle } = await openRunBundle();
    expect(bundle.format).toBe('callgate-bundle/3');
    expect((bundle.records as LedgerRecord[]).every((record) => record.v === 2)).toBe(true);
    const report = verifyBundle(bundle, pinned);
    expect(report.failures).toEqual([]);
    expect(report.unsigned).toEqual([]);
    expect(verifyBundleText(serializeBundle(bundle), pinned).failures).toEqual([]);
  });

  it('fails an edited exported_at or synchronous under the pinned key', async () => {
    const { bundle } = await openRunBundle();
    expect(checks(verifyBundle({ ...bundle, exported_at: bundle.exported_at + 1 }, pinned))).toEqual([
      'manifest',
    ]);
    expect(checks(verifyBundle({ ...bundle, synchronous: 'FULL' }, pinned))).toEqual(['manifest']);
  });

  it("fails a run in progress cut short inside its newest checkpoint, naming the run's signed head", async () => {
    const { bundle } = await openRunBundle();
    for (const cut of [1, 2, 5]) {
      const report = verifyBundle({ ...bundle, records: bundle.records.slice(0, -cut) }, pinned);
      expect(checks(report)).toContain('manifest');
      expect(
        report.failures.some(
          (failure) => failure.check === 'manifest' && /cut from its tail/.test(failure.message),
        ),
      ).toBe(true);
    }
  });

  it('fails a manifest re-signed by another key', async () => {
    const { bundle } = await openRunBundle();
    const other = await Ledger.open(new MemoryStore(), {
      signer: logSignerFromPrivateKey(ORIGIN, generateEd25519KeyPair().privateKey),
      origin: ORIGIN,
    });
    await other.append('run-a', { type: 'run-start', principal: 'p', framework: 'f', labels: {} });
    const theirs = (await other.exportRun('run-a')) as BundleV3;
    expect(checks(verifyBundle({ ...bundle, manifest: theirs.manifest }, pinned))).toContain('manifest');
  });

  it('names an unknown bundle format as such', () => {
    const report = verifyBundle({ format: 'callgate-bundle/9', records: [] });
    expect(report.failures).toEqual([
      expect.objectContaining({
        check: 'bundle-shape',
        message: expect.stringMatching(
          /^unknown bundle format "callgate-bundle\/9": this verifier reads callgate-bundle\/1, callgate-bundle\/2, callgate-bundle\/3$/,
        ),
      }),
    ]);
    expect(verifyBundle({ records: [] }).failures[0]?.message).toMatch(/no "format" field/);
  });
});

describe('canonicalOfParsed', () => {
  it('gives exactly what the canonical serializer gives, or throws where it throws', () => {
    const outcome = (run: () => string) => {
      try {
        return run();
      } catch {
        return 'threw';
      }
    };
    const odd = fc.constantFrom(
      Number.NaN,
      Number.POSITIVE_INFINITY,
      -0,
      1e21,
      5e-324,
      '\ud800',
      'a\\udb',
      undefined,
      Object.assign(new Array(3), { 0: 1, 2: 2 }),
    );
    const value = fc.oneof(
      fc.jsonValue(),
      fc.object({ values: [fc.jsonValue(), odd] }),
      fc.dictionary(
        fc.constantFrom('1', '10', '9', 'a', 'B', '\u00e9', '__proto__', '', 'toJSON'),
        fc.oneof(fc.jsonValue(), odd),
        { maxKeys: 5 },
      ),
      fc.array(fc.oneof(fc.jsonValue(), odd)),
      odd,
    );
    fc.assert(
      fc.property(value, fc.boolean(), (item, reparse) => {
        let input: unknown = item;
        if (reparse) {
          const text = JSON.stringify(item);
          if (text === undefined) return;
          input = JSON.parse(text);
        }
        expect(outcome(() => canonicalOfParsed(input))).toBe(outcome(() => fastCanonicalJson(input)));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('lossless bundle text', () => {
  it('reads any JSON without a repeated key, and refuses one where an object repeats a key', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ maxLength: 4 }), fc.nat(), (value, key, where) => {
        const text = JSON.stringify({ format: 'x', value }, null, where % 3);
        expect(parseBundleText(text).bundle).toEqual(JSON.parse(text));
        // Repeat a key (as written, escapes and all) in one of the text's objects.
        const openings = [...text.matchAll(/\{/g)].map((match) => match.index as number);
        const at = openings[where % openings.length] as number;
        const name = JSON.stringify(key);
        const repeated = `${text.slice(0, at + 1)}${name}:1,${name}:2${text[at + 1] === '}' ? '' : ','}${text.slice(at + 1)}`;
        let inString = false;
        for (let index = 0; index < at; index++) {
          if (text[index] === '\\') index++;
          else if (text[index] === '"') inString = !inString;
        }
        if (inString) return; // that brace is inside a string
        expect(() => JSON.parse(repeated)).not.toThrow();
        expect(() => parseBundleText(repeated)).toThrow(/twice/);
      }),
      { numRuns: 2000 },
    );
  });

  it('decides a line canonical exactly when the canonical serializer gives that line', () => {
    const slow = (line: string, parsed: unknown) => {
      try {
        return fastCanonicalJson(parsed) === line;
      } catch {
        return false;
      }
    };
    const value = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.constantFrom('1', '10', '9', 'a', 'B', '\u00e9', '__proto__', ''), fc.jsonValue(), {
        maxKeys: 5,
      }),
      fc.constantFrom('\ud800', 'x\udc00y', '\ud83d\ude00', 1e21, 1e-7, -0),
    );
    fc.assert(
      fc.property(value, fc.constantFrom('stringify', 'canonical', 'spaced'), (item, form) => {
        let line: string;
        try {
          line =
            form === 'canonical'
              ? fastCanonicalJson(item)
              : JSON.stringify(item, null, form === 'spaced' ? 1 : undefined).replace(/\n/g, '');
        } catch {
          return;
        }
        if (line === undefined) return;
        const parsed = JSON.parse(line);
        expect(isCanonicalLine(line, parsed)).toBe(slow(line, parsed));
      }),
      { numRuns: 3000 },
    );
  });

  it('holds one canonical record a line and reads back the same bundle', async () => {
    const { bundle } = await openRunBundle();
    const text = serializeBundle(bundle);
    const lines = text.split('\n');
    expect(lines[0]?.endsWith('"records":[')).toBe(true);
    expect(lines[1]).toBe(`${fastCanonicalJson(bundle.records[0])},`);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(bundle)));
    expect(parseBundleText(text).bundle).toEqual(JSON.parse(text));
  });

  it('refuses a record line with a duplicate key, naming its line, though JSON.parse reads it', async () => {
    const { bundle } = await openRunBundle();
    const lines = serializeBundle(bundle).split('\n');
    // The run's second record, its role given twice: JSON.parse keeps the last.
    lines[2] = (lines[2] as string).replace('"role":"user"', '"role":"admin","role":"user"');
    const text = lines.join('\n');
    expect(() => JSON.parse(text)).not.toThrow();
    const report = verifyBundleText(text, pinned);
    expect(report.ok).toBe(false);
    expect(report.failures[0]).toMatchObject({
      check: 'canonical',
      message: expect.stringMatching(/^line 3 of the bundle/),
    });
  });

  it('refuses any other non-canonical record line, and a duplicate key in the other fields', async () => {
    const { bundle } = await openRunBundle();
    const lines = serializeBundle(bundle).split('\n');
    const spaced = [...lines];
    spaced[4] = (spaced[4] as string).replace('":', '": ');
    expect(verifyBundleText(spaced.join('\n'), pinned).failures[0]?.message).toMatch(/^line 5 of the bundle/);
    const header = [...lines];
    header[0] = (header[0] as string).replace('{"format"', `{"exported_at":1,"format"`);
    expect(verifyBundleText(header.join('\n'), pinned).ok).toBe(false);
    // Indented JSON of the same bundle is read whole, refusing duplicate keys there too.
    const indented = JSON.stringify(bundle, null, 2).replace(
      '"role": "user"',
      '"role": "admin", "role": "user"',
    );
    expect(verifyBundleText(indented, pinned).ok).toBe(false);
    expect(verifyBundleText(JSON.stringify(bundle, null, 2), pinned).failures).toEqual([]);
  });
});

/** Low-entropy argument values: what a guess would enumerate. */
const argumentValue = fc.oneof(
  fc.integer({ min: -1000, max: 10_000 }),
  fc.boolean(),
  fc.constantFrom('yes', 'no', 'acme', 'DE89370400440532013000', ''),
  fc.string({ maxLength: 8 }),
);
const argumentsOf = fc.dictionary(
  fc
    .string({ minLength: 1, maxLength: 8 })
    .filter((key) => !['__proto__', 'constructor', 'prototype'].includes(key)),
  argumentValue,
  { maxKeys: 4 },
);

/** SHA-256 hex of every canonical form a guess could hash: the arguments and each value alone. */
function guessableDigests(args: Record<string, unknown>): string[] {
  const forms = [fastCanonicalJson(args), ...Object.values(args).map((value) => fastCanonicalJson(value))];
  for (const [key, value] of Object.entries(args)) forms.push(fastCanonicalJson({ [key]: value }));
  return forms.map((form) => sha256(form).toString('hex'));
}

describe('keyed arguments digests (record format version 2)', () => {
  it('a bundle holds no SHA-256 of any canonical form of the arguments; with the run key revealed the verifier confirms the openings', async () => {
    await fc.assert(
      fc.asyncProperty(argumentsOf, async (args) => {
        const store = new MemoryStore();
        const ledger = await openLog(store);
        const engine = new Engine({
          store,
          ledger,
          vault: true,
          policy: loadPolicy('version: 1\ndefault: allow\n'),
          tools: [{ name: 'lookup', inputSchema: { type: 'object' } }],
        });
        const run = await engine.startRun({ principal: 'p', framework: 'f' });
        const [verdict] = await engine.decide(run.run_id, [{ id: 'c1', tool: 'lookup', arguments: args }]);
        expect(verdict?.status).toBe('allowed');
        await engine.endRun(run.run_id);

        const plain = (await ledger.exportRun(run.run_id)) as BundleV3;
        expect(plain.run_keys).toBeUndefined();
        const text = serializeBundle(plain);
        for (const hex of guessableDigests(args)) expect(text).not.toContain(hex);
        expect(verifyBundleText(text, pinned).failures).toEqual([]);

        const opened = (await ledger.exportRun(run.run_id, { openings: true })) as BundleV3;
        expect(opened.run_keys).toHaveLength(1);
        const report = verifyBundleText(serializeBundle(opened), pinned);
        expect(report.failures).toEqual([]);
        // A wrong run key does not confirm them.
        const wrong = {
          ...opened,
          run_keys: [{ run_id: run.run_id, key: Buffer.alloc(32, 7).toString('base64url') }],
        };
        expect(checks(verifyBundle(wrong, pinned))).toEqual(['arguments-digest']);
        await engine.close();
      }),
      { numRuns: 40 },
    );
  }, 60_000);

  it('a log that began as version 1 keeps writing version 1; a version 2 log without its secret refuses to open', async () => {
    const start = { type: 'run-start', principal: 'p', framework: 'f', labels: {} } as const;
    const base = { prev: null, run_id: 'run-a', run_seq: 0, seq: 0, ts: 1 };
    const legacy = new MemoryStore();
    await legacy.appendRecords([sealRecord({ ...start, ...base, v: 1 } as LedgerRecord)]);
    const ledger = await openLog(legacy);
    const next = await ledger.append('run-a', { type: 'gap', reason: 'r', from_ts: 0, to_ts: 1, calls: 0 });
    expect(next.v).toBe(1);
    expect(await legacy.getMeta(ARGUMENTS_SECRET_META_KEY)).toBeUndefined();
    expect(verifyBundle(await ledger.exportRun('run-a'), pinned).failures).toEqual([]);
    await ledger.close();

    const orphaned = new MemoryStore();
    await orphaned.appendRecords([sealRecord({ ...start, ...base, v: 2 } as LedgerRecord)]);
    await expect(openLog(orphaned)).rejects.toThrow(/arguments secret .* is missing/);
  });
});
