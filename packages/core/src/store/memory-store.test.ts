import { createHash } from 'node:crypto';
import type { LedgerRecord, StoredGrant } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyCall, MemoryStore } from './memory-store.js';
import type { CallRow, StoredRecord } from './store.js';

const callRow: fc.Arbitrary<CallRow> = fc.record(
  {
    run_id: fc.string(),
    call_id: fc.string(),
    attempt: fc.nat(),
    minted: fc.boolean(),
    tool: fc.string(),
    arguments_digest: fc.option(fc.string(), { nil: null }),
    decision: fc.constantFrom('allow', 'deny', 'ask', 'refused'),
    rules: fc.array(fc.string()),
    approval_id: fc.string(),
    idempotency_key: fc.string(),
    outcome: fc.constantFrom('ok', 'error', 'denied'),
    decided_at: fc.integer(),
    ended_at: fc.option(fc.integer(), { nil: undefined }),
  },
  {
    requiredKeys: [
      'run_id',
      'call_id',
      'attempt',
      'minted',
      'tool',
      'arguments_digest',
      'decision',
      'rules',
      'decided_at',
    ],
  },
) as fc.Arbitrary<CallRow>;

describe('copyCall', () => {
  it('gives what structuredClone gives for any call row, sharing nothing with it', () => {
    fc.assert(
      fc.property(callRow, (call) => {
        const copy = copyCall(call);
        expect(copy).toStrictEqual(structuredClone(call));
        expect(copy).not.toBe(call);
        expect(copy.rules).not.toBe(call.rules);
      }),
    );
  });

  it('keeps a stored call row apart from the caller’s object, both ways', async () => {
    const store = new MemoryStore();
    const call = fc.sample(callRow, { numRuns: 1, seed: 7 })[0] as CallRow;
    await store.putCall(call);
    call.rules.push('changed after put');
    call.decision = 'deny';
    const [listed] = await store.listCalls(call.run_id);
    expect(listed?.rules).not.toContain('changed after put');
    (listed as CallRow).rules.push('changed after read');
    expect((await store.getCall(call.run_id, call.call_id))?.rules).not.toContain('changed after read');
  });
});

/**
 * The grant operations as the store answered them before grants were indexed: a scan of every
 * grant in the order put. The index must answer every sequence of operations alike.
 */
class ScanningGrants {
  readonly grants = new Map<string, StoredGrant>();
  put(grant: StoredGrant): void {
    if (!this.grants.has(grant.token_hash)) this.grants.set(grant.token_hash, structuredClone(grant));
  }
  consume(tokenHash: string, now: number): StoredGrant | undefined {
    const grant = this.grants.get(tokenHash);
    if (!grant || grant.consumed_at !== undefined || grant.expires_at <= now) return undefined;
    const before = structuredClone(grant);
    grant.consumed_at = now;
    return before;
  }
  consumed(binding: { run_id: string; call_id: string; tool: string; arguments_digest: string }): boolean {
    return [...this.grants.values()].some(
      (g) =>
        g.run_id === binding.run_id &&
        g.call_id === binding.call_id &&
        g.tool === binding.tool &&
        g.arguments_digest === binding.arguments_digest &&
        g.consumed_at !== undefined,
    );
  }
  find(query: { tool: string; arguments_digest: string; run_id?: string; now: number }): StoredGrant[] {
    return [...this.grants.values()]
      .filter(
        (g) =>
          g.tool === query.tool &&
          g.arguments_digest === query.arguments_digest &&
          (query.run_id === undefined || g.run_id === query.run_id) &&
          g.consumed_at === undefined &&
          g.expires_at > query.now,
      )
      .map((g) => structuredClone(g));
  }
}

describe('MemoryStore grants, indexed by tool and arguments digest', () => {
  // Few distinct values, so that operations meet the same grants often.
  const small = (prefix: string) => fc.constantFrom(`${prefix}0`, `${prefix}1`);
  const grant: fc.Arbitrary<StoredGrant> = fc.record({
    token_hash: fc.constantFrom('token-0', 'token-1', 'token-2', 'token-3', 'token-4'),
    run_id: small('run-'),
    call_id: small('call-'),
    tool: small('tool-'),
    arguments_digest: small('sha256:'),
    expires_at: fc.integer({ min: 3, max: 10 }),
    // Mostly unconsumed, so that a consume and a find meet the same grant often.
    consumed_at: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 4 },
      { arbitrary: fc.integer({ min: 0, max: 10 }), weight: 1 },
    ),
  }) as unknown as fc.Arbitrary<StoredGrant>;
  const operation = fc.oneof(
    grant.map((value) => ({ kind: 'put' as const, grant: value })),
    fc.record({
      kind: fc.constant('consume' as const),
      token: fc.constantFrom('token-0', 'token-1', 'token-2', 'token-3', 'token-4'),
      now: fc.integer({ min: 0, max: 10 }),
    }),
    fc.record({
      kind: fc.constant('find' as const),
      tool: small('tool-'),
      digest: small('sha256:'),
      run: fc.option(small('run-'), { nil: undefined }),
      now: fc.integer({ min: 0, max: 10 }),
    }),
    fc.record({
      kind: fc.constant('consumed' as const),
      run: small('run-'),
      call: small('call-'),
      tool: small('tool-'),
      digest: small('sha256:'),
    }),
  );

  it('answers put, consume, find and grantConsumed as a scan of every grant would', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 5, maxLength: 40 }), async (operations) => {
        const store = new MemoryStore();
        const model = new ScanningGrants();
        for (const op of operations) {
          if (op.kind === 'put') {
            const known = model.grants.has(op.grant.token_hash);
            model.put(op.grant);
            if (known) await expect(store.putGrant(op.grant)).rejects.toThrow(/exists/);
            else await store.putGrant(op.grant);
          } else if (op.kind === 'consume') {
            expect(await store.consumeGrant(op.token, op.now)).toStrictEqual(model.consume(op.token, op.now));
          } else if (op.kind === 'find') {
            const query = {
              tool: op.tool,
              arguments_digest: op.digest,
              ...(op.run !== undefined ? { run_id: op.run } : {}),
              now: op.now,
            };
            const got = await store.findGrants(query);
            if (got.length) console.log('FOUND', got.length, model.find(query).length);
            expect(got).toStrictEqual(model.find(query));
          } else {
            const binding = { run_id: op.run, call_id: op.call, tool: op.tool, arguments_digest: op.digest };
            expect(await store.grantConsumed(binding)).toBe(model.consumed(binding));
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('MemoryStore records, leaf hashes packed in one buffer', () => {
  const stored = (seq: number, runId: string, runSeq: number, leaf: Uint8Array): StoredRecord => ({
    record: {
      v: 2,
      seq,
      run_id: runId,
      run_seq: runSeq,
      ts: 1_760_000_000_000 + seq,
      prev: null,
      type: 'run-start',
      principal: 'alice',
      framework: 'test',
      labels: {},
    } as LedgerRecord,
    canonical: '{}',
    leaf_hash: leaf,
    digest: `sha256:${Buffer.from(leaf).toString('hex')}`,
  });

  it('reads back every leaf hash, record and run head appended, across growth of the buffer', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Batch sizes (a store starts with room for 64 hashes), the runs' interleaving, a range read.
        fc.array(fc.integer({ min: 1, max: 70 }), { minLength: 1, maxLength: 5 }),
        fc.nat(7),
        fc.nat(300),
        fc.nat(300),
        async (sizes, stride, from, to) => {
          const store = new MemoryStore();
          const leaves: Uint8Array[] = [];
          const runSeqs = new Map<string, number>();
          const heads = new Map<string, { run_seq: number; digest: string }>();
          for (const size of sizes) {
            const batch = Array.from({ length: size }, () => {
              const seq = leaves.length;
              const run = ['a', 'b', 'c'][(seq * stride) % 3] as string;
              const runSeq = runSeqs.get(run) ?? 0;
              runSeqs.set(run, runSeq + 1);
              const leaf = Uint8Array.from(createHash('sha256').update(`leaf ${seq}`).digest());
              const row = stored(seq, run, runSeq, leaf);
              leaves.push(Uint8Array.from(leaf));
              heads.set(run, { run_seq: runSeq, digest: row.digest });
              return row;
            });
            await store.appendRecords(batch);
            // The caller's buffers may be reused afterwards: the store kept its own bytes.
            for (const row of batch) row.leaf_hash.fill(0);
          }
          expect(await store.ledgerSize()).toBe(leaves.length);
          const read = await store.readLeafHashes(from, to);
          expect(read.map((leaf) => Buffer.from(leaf).toString('hex'))).toEqual(
            leaves.slice(from, to).map((leaf) => Buffer.from(leaf).toString('hex')),
          );
          expect((await store.readRecords(from, to)).map((record) => record.seq)).toEqual(
            leaves.slice(from, to).map((_, index) => from + index),
          );
          for (const run of ['a', 'b', 'c', 'none']) expect(await store.runHead(run)).toEqual(heads.get(run));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a batch with a leaf hash that is not 32 bytes, keeping none of it', async () => {
    const store = new MemoryStore();
    await expect(
      store.appendRecords([stored(0, 'a', 0, new Uint8Array(32)), stored(1, 'a', 1, new Uint8Array(31))]),
    ).rejects.toMatchObject({ kind: 'ledger-invalid' });
    expect(await store.ledgerSize()).toBe(0);
    expect(await store.runHead('a')).toBeUndefined();
  });
});
