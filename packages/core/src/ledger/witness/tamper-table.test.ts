// The tamper table: ten ways to falsify an exported run (a `callgate-bundle/3`, what exports
// write), each at 30 random placements, checked by the offline verifier with the log key pinned,
// with --strict, and with a witness. Printed as a table. With the witness every row must be caught
// 30 times out of 30; with the key pinned, every row but re-signing with the real key.
import type { Bundle, LedgerRecord, RecordBody } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../crypto.js';
import { hashRecord } from '../record.js';
import { parseCheckpoint, parseNote } from '../signed-note.js';
import { buildBundleFixture } from '../testing/fixture.js';
import type { VerifyOptions } from '../verify/report.js';
import { verifyBundle } from '../verify/verify-bundle.js';
import { addCosignatures, witnessSignerFromPrivateKey } from './cosignature.js';
import { addCheckpointBody, MemoryWitnessState, Witness } from './witness.js';

const PLACEMENTS = 30;
/** `exported_at` and `synchronous`: signed by the export manifest of `callgate-bundle/3`. */
const EXPORT_METADATA = 'edit export metadata (exported_at, synchronous)';
/** Only a witness catches the log key's own holder re-signing a rewritten history. */
const RESIGN = 're-sign with the real key';

/** A small deterministic PRNG (mulberry32), so a failing placement can be replayed. */
function random(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;

/** Has `witness` cosign the bundle's checkpoints in order (as the log submitted them) and adds the lines. */
async function witnessed(bundle: Bundle, witness: Witness): Promise<Bundle> {
  const copy = structuredClone(bundle);
  let previous = 0;
  const order = copy.checkpoints.map((note, index) => ({ note, index, size: sizeOf(note) }));
  order.sort((a, b) => a.size - b.size);
  for (const { note, index, size } of order) {
    const proof =
      previous === 0
        ? []
        : (copy.consistency.find((p) => p.from_size === previous && p.to_size === size)?.hashes ?? []).map(
            (hash) => Buffer.from(hash, 'base64'),
          );
    const response = await witness.addCheckpoint(addCheckpointBody(previous, proof, note));
    if (response.status !== 200)
      throw new Error(`the witness refused size ${size}: ${response.status} ${response.body}`);
    copy.checkpoints[index] = addCosignatures(note, response.body);
    previous = size;
  }
  return copy;
}

/** Re-chains a run after record `from` changed: each later record of the run names the new digest. */
function rechain(records: LedgerRecord[], from: number): void {
  const runId = records[from]?.run_id;
  let previous = hashRecord(records[from]).digest;
  for (let index = from + 1; index < records.length; index += 1) {
    const record = records[index] as LedgerRecord;
    if (record.run_id !== runId) continue;
    (record as { prev: string | null }).prev = previous;
    previous = hashRecord(record).digest;
  }
}

/** Changes one scalar leaf of a record (not its type): a string gets a character, a number +1. */
function editRecord(record: Record<string, unknown>, pick: (below: number) => number): void {
  const fields = Object.keys(record).filter(
    (key) => key !== 'type' && (typeof record[key] === 'string' || typeof record[key] === 'number'),
  );
  const key = fields[pick(fields.length)] as string;
  const value = record[key];
  record[key] = typeof value === 'number' ? value + 1 : `${String(value)}x`;
}

const honest = await buildBundleFixture({ proofs: false });
const witnessSigner = witnessSignerFromPrivateKey('witness.test/w1', sha256('witness key'));
const witness = new Witness({
  signer: witnessSigner,
  logs: { [honest.bundle.origin]: honest.signer.verifierKey },
  state: new MemoryWitnessState(),
  clock: () => 1_760_000_100,
});
const honestWitnessed = await witnessed(honest.bundle, witness);

/** The strongest re-signing attacker: holds the log key, rewrites one record, re-exports, and copies the cosignature lines over. */
async function resigned(pick: (below: number) => number): Promise<Bundle> {
  let rewritten: Awaited<ReturnType<typeof buildBundleFixture>> | undefined;
  // A rewrite the ledger accepts (a changed digest field would not be a valid record).
  for (let attempt = 0; !rewritten && attempt < 20; attempt += 1) {
    const target = pick(honest.bundle.records.length - 2) + 1;
    try {
      rewritten = await buildBundleFixture({
        signer: honest.signer,
        proofs: false,
        script: (bodies) =>
          bodies.map((body, index) => {
            if (index !== target) return body;
            const copy = structuredClone(body) as Record<string, unknown>;
            editRecord(copy, pick);
            return copy as RecordBody;
          }),
      });
    } catch {
      rewritten = undefined;
    }
  }
  if (!rewritten) throw new Error('no valid rewrite found');
  const bundle = structuredClone(rewritten.bundle);
  bundle.checkpoints = bundle.checkpoints.map((note) => {
    const original = honestWitnessed.checkpoints.find((other) => sizeOf(other) === sizeOf(note));
    const lines = original
      ? original.split('\n').filter((line) => line.startsWith(`\u2014 ${witnessSigner.name} `))
      : [];
    return lines.length > 0 ? addCosignatures(note, `${lines.join('\n')}\n`) : note;
  });
  return bundle;
}

type Tamper = (bundle: Bundle, pick: (below: number) => number) => Bundle | Promise<Bundle>;
const records = (bundle: Bundle) => bundle.records as LedgerRecord[];

const ROWS: Array<[string, Tamper]> = [
  [
    'edit',
    (bundle, pick) => {
      editRecord(records(bundle)[pick(bundle.records.length)] as never, pick);
      return bundle;
    },
  ],
  [
    'delete',
    (bundle, pick) => {
      const index = pick(bundle.records.length - 1);
      bundle.records.splice(index, 1);
      return bundle;
    },
  ],
  [
    'swap',
    (bundle, pick) => {
      const a = pick(bundle.records.length);
      const b = (a + 1 + pick(bundle.records.length - 1)) % bundle.records.length;
      [bundle.records[a], bundle.records[b]] = [bundle.records[b], bundle.records[a]];
      return bundle;
    },
  ],
  [
    'forged insert',
    (bundle, pick) => {
      const index = pick(bundle.records.length + 1);
      const model = structuredClone(records(bundle)[Math.max(0, index - 1)] as LedgerRecord);
      editRecord(model as never, pick);
      bundle.records.splice(index, 0, model);
      return bundle;
    },
  ],
  [
    'truncate tail',
    (bundle, pick) => {
      const cut = 1 + pick(5);
      bundle.records.splice(-cut);
      return bundle;
    },
  ],
  [
    're-chain without key',
    (bundle, pick) => {
      const index = pick(bundle.records.length);
      editRecord(records(bundle)[index] as never, pick);
      rechain(records(bundle), index);
      return bundle;
    },
  ],
  [RESIGN, (_bundle, pick) => resigned(pick)],
  [
    'torn final line',
    (bundle, pick) => {
      const last = JSON.stringify(bundle.records.at(-1));
      const torn = last.slice(0, 1 + pick(last.length - 1));
      let value: unknown = torn;
      try {
        value = JSON.parse(torn);
      } catch {
        // a torn line does not parse: what a reader has is its text
      }
      bundle.records[bundle.records.length - 1] = value;
      return bundle;
    },
  ],
  [
    'delete checkpoints',
    (bundle, pick) => {
      const keep = bundle.checkpoints.filter(() => pick(2) === 0);
      bundle.checkpoints = keep.length === bundle.checkpoints.length ? keep.slice(0, -1) : keep;
      return bundle;
    },
  ],
  [
    'edit metadata',
    (bundle, pick) => {
      const edits = [
        () => Object.assign(bundle, { origin: `${bundle.origin}x` }),
        () => Object.assign(bundle, { public_key: `${bundle.public_key.slice(0, -2)}AA` }),
        () => Object.assign(bundle, { format: 'callgate-bundle/9' }),
        () => {
          const policy = bundle.policies[pick(bundle.policies.length)];
          if (policy) policy.policy = { ...(policy.policy as object), default: 'allow' };
        },
      ];
      (edits[pick(edits.length)] as () => void)();
      return bundle;
    },
  ],
  [
    EXPORT_METADATA,
    (bundle, pick) => {
      if (pick(2) === 0) bundle.exported_at += 1 + pick(1000);
      else bundle.synchronous = bundle.synchronous === 'FULL' ? 'NORMAL' : 'FULL';
      return bundle;
    },
  ],
];

const COLUMNS: Array<[string, VerifyOptions]> = [
  ['key pinned', { publicKey: honest.signer.verifierKey }],
  ['+ strict', { publicKey: honest.signer.verifierKey, strict: true }],
  [
    '+ strict + witness',
    { publicKey: honest.signer.verifierKey, strict: true, witnesses: [witnessSigner.verifierKey] },
  ],
];

describe('the tamper table', () => {
  it('the honest witnessed bundle verifies in every column', () => {
    for (const [, options] of COLUMNS) expect(verifyBundle(honestWitnessed, options).failures).toEqual([]);
  });

  it(`catches every row ${PLACEMENTS}/${PLACEMENTS} with the witness`, async () => {
    const table: Array<Record<string, string>> = [];
    const missed: string[] = [];
    for (const [row, tamper] of ROWS) {
      const caught = COLUMNS.map(() => 0);
      for (let placement = 0; placement < PLACEMENTS; placement += 1) {
        const pick = random(1000 * ROWS.findIndex(([name]) => name === row) + placement);
        const bundle = await tamper(structuredClone(honestWitnessed), pick);
        COLUMNS.forEach(([name, options], column) => {
          if (!verifyBundle(bundle, options).ok) caught[column] = (caught[column] ?? 0) + 1;
          else if (column === COLUMNS.length - 1 || row !== RESIGN)
            missed.push(`${row} #${placement} (${name})`);
        });
      }
      table.push(
        Object.fromEntries([
          ['tamper', row],
          ...COLUMNS.map(([name], i) => [name, `${caught[i]}/${PLACEMENTS}`]),
        ]),
      );
    }
    console.table(table);
    expect(missed).toEqual([]);
    expect(table.find((line) => line.tamper === EXPORT_METADATA)?.['key pinned']).toBe(
      `${PLACEMENTS}/${PLACEMENTS}`,
    );
    expect(table.find((line) => line.tamper === 'truncate tail')?.['key pinned']).toBe(
      `${PLACEMENTS}/${PLACEMENTS}`,
    );
  }, 120_000);
});
