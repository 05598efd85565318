import type { LedgerRecord } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../crypto.js';
import { canonicalJson } from '../json/canonical.js';
import { fastCanonicalJson } from './fast-canonical.js';
import { leafHash } from './merkle.js';
import { buildRecord, hashRecord, recordCommitments, sealRecord } from './record.js';

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

describe('buildRecord', () => {
  it('orders keys as RFC 8785 does, the ledger fields winning and undefined values left out', () => {
    const body = { type: 'run-end', status: 'completed', calls: 2, seq: 99, extra: undefined } as never;
    const record = buildRecord(body, [null, 'run-1', 0, 7, 1_760_000_000_000, 1]);
    expect(Object.keys(record)).toEqual([
      'calls',
      'prev',
      'run_id',
      'run_seq',
      'seq',
      'status',
      'ts',
      'type',
      'v',
    ]);
    expect(record).toMatchObject({ seq: 7, prev: null, v: 1 });
    expect(JSON.stringify(record)).toBe(canonicalJson(record));
    // The same keys in another order, and a second body of the same shape, use the right layout.
    const again = buildRecord({ calls: 3, status: 'failed', type: 'run-end' } as never, [
      'sha256:x',
      'r',
      1,
      8,
      5,
      1,
    ]);
    expect(again).toMatchObject({ calls: 3, status: 'failed', prev: 'sha256:x', seq: 8 });
  });
});

describe('recordCommitments', () => {
  it('lists the commitments of each kind of record', () => {
    const digest = (n: number) => `sha256:${String(n).repeat(64)}`;
    const base = { v: 1, seq: 0, run_id: 'r', run_seq: 0, ts: 0, prev: null } as const;
    expect(
      recordCommitments({
        ...base,
        type: 'model-message',
        role: 'assistant',
        content_commitment: digest(1),
        tool_calls: [{ call_id: 'c', minted: false, tool: 't', arguments_commitment: digest(2) }],
      }),
    ).toEqual([digest(1), digest(2)]);
    expect(
      recordCommitments({
        ...base,
        type: 'mcp-exchange',
        method: 'resources/read',
        upstream: 'u',
        target: null,
        params_commitment: digest(3),
        result_commitment: null,
      }),
    ).toEqual([digest(3)]);
    expect(recordCommitments({ ...base, type: 'run-end', status: 'completed', calls: 0 })).toEqual([]);
  });
});
