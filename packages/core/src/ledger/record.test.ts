import type { LedgerRecord } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../crypto.js';
import { canonicalJson } from '../json/canonical.js';
import { fastCanonicalJson } from './fast-canonical.js';
import { leafHash } from './merkle.js';
import { hashRecord, sealRecord } from './record.js';

const outcome = (run: () => string): { ok: true; value: string } | { ok: false; message: string } => {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
};

describe('fastCanonicalJson', () => {
  it('gives exactly what canonicalJson gives, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(fastCanonicalJson(value)).toBe(canonicalJson(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives what canonicalJson gives (or fails as it does) for awkward values', () => {
    const awkward = fc.oneof(
      fc.anything({
        withBigInt: true,
        withNullPrototype: true,
        withSparseArray: true,
        withBoxedValues: true,
      }),
      fc.string({ unit: 'binary' }),
      fc.dictionary(fc.string({ unit: 'binary' }), fc.oneof(fc.double(), fc.constant(undefined))),
    );
    fc.assert(
      fc.property(awkward, (value) => {
        expect(outcome(() => fastCanonicalJson(value))).toEqual(outcome(() => canonicalJson(value)));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys by UTF-16 code units and writes numbers as ECMAScript does', () => {
    const value = { b: [1e21, -0, 0.1, 1e-7], a: { '\u20ac': 1, '\ud83d\ude00': 2, z: null, A: true } };
    expect(fastCanonicalJson(value)).toBe(
      '{"a":{"A":true,"z":null,"\u20ac":1,"😀":2},"b":[1e+21,0,0.1,1e-7]}',
    );
  });
});

describe('sealRecord', () => {
  const record: LedgerRecord = {
    v: 1,
    seq: 0,
    run_id: 'run-1',
    run_seq: 0,
    ts: 1_760_000_000_000,
    prev: null,
    type: 'run-end',
    status: 'completed',
    calls: 0,
  };

  it('holds the canonical JSON, the RFC 9162 leaf hash and the sha256 digest', () => {
    const stored = sealRecord(record);
    expect(stored.record).toBe(record);
    expect(stored.canonical).toBe(canonicalJson(record));
    expect(Buffer.from(stored.leaf_hash)).toEqual(leafHash(canonicalJson(record)));
    expect(stored.digest).toBe(`sha256:${sha256(canonicalJson(record)).toString('hex')}`);
  });

  it('refuses a value without canonical JSON', () => {
    expect(() => hashRecord({ ...record, calls: Number.NaN })).toThrow(/canonical/);
  });
});
