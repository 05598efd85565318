import type { StoredGrant } from '@callgate/protocol';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { digestOf, makeGrant } from './fixtures.js';
import type { CurrentStore } from './store-contract.js';

const NOW = 1_700_000_000_000;

export function grantsContract(store: CurrentStore): void {
  it('consumes a grant once and returns it as it was before consumption', async () => {
    const grant = makeGrant({ expires_at: NOW + 60_000 });
    await store().putGrant(grant);
    expect(await store().consumeGrant(grant.token_hash, NOW)).toStrictEqual(grant);
    expect(await store().consumeGrant(grant.token_hash, NOW + 1)).toBeUndefined();
    expect(
      await store().findGrants({ tool: grant.tool, arguments_digest: grant.arguments_digest, now: NOW }),
    ).toEqual([]);
  });

  it('says whether a grant of exactly this run, call, tool and arguments digest was consumed', async () => {
    const grant = makeGrant({ run_id: 'run-c', call_id: 'call-c', expires_at: NOW + 60_000 });
    const binding = {
      run_id: grant.run_id,
      call_id: grant.call_id,
      tool: grant.tool,
      arguments_digest: grant.arguments_digest,
    };
    await store().putGrant(grant);
    expect(await store().grantConsumed(binding)).toBe(false);
    await store().consumeGrant(grant.token_hash, NOW);
    expect(await store().grantConsumed(binding)).toBe(true);
    for (const other of [
      { ...binding, run_id: 'run-other' },
      { ...binding, call_id: 'call-other' },
      { ...binding, tool: 'other_tool' },
      { ...binding, arguments_digest: digestOf('other arguments') },
    ])
      expect(await store().grantConsumed(other)).toBe(false);
  });

  it('never consumes an expired grant (expires_at <= now) or an unknown token', async () => {
    const grant = makeGrant({ expires_at: NOW });
    await store().putGrant(grant);
    expect(await store().consumeGrant(grant.token_hash, NOW)).toBeUndefined();
    expect(await store().consumeGrant(grant.token_hash, NOW + 1)).toBeUndefined();
    // Still unconsumed: asking with an earlier clock is a caller's bug, but it shows nothing was spent.
    expect(await store().consumeGrant(grant.token_hash, NOW - 1)).toStrictEqual(grant);
    expect(await store().consumeGrant(digestOf('unknown token'), NOW)).toBeUndefined();
  });

  it('stores a grant spent in one write as a put and a consume leave it (putSpentGrant, where offered)', async () => {
    const spentOnce = store().putSpentGrant?.bind(store());
    if (spentOnce === undefined) return; // optional: such a store gets a put and a consume instead
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: -2, max: 2 }),
        async (ttl, later) => {
          runs += 1;
          const spent = makeGrant({ run_id: `run-spent-${runs}`, expires_at: NOW + ttl });
          const twice = makeGrant({ run_id: `run-twice-${runs}`, expires_at: NOW + ttl });
          await spentOnce(spent, NOW);
          await store().putGrant(twice);
          expect(await store().consumeGrant(twice.token_hash, NOW)).toStrictEqual(twice);
          for (const grant of [spent, twice]) {
            const { token_hash: _, v: __, expires_at: ___, ...binding } = grant;
            expect(await store().grantConsumed(binding)).toBe(true);
            expect(await store().consumeGrant(grant.token_hash, NOW + later)).toBeUndefined();
            const query = {
              tool: grant.tool,
              arguments_digest: grant.arguments_digest,
              run_id: grant.run_id,
            };
            expect(await store().findGrants({ ...query, now: NOW + later })).toEqual([]);
          }
          await expect(spentOnce(spent, NOW)).rejects.toMatchObject({ kind: 'conflict' });
        },
      ),
      { numRuns: 25 },
    );
  });

  it('of 100 concurrent consumptions of one token exactly one succeeds', async () => {
    const grant = makeGrant({ expires_at: NOW + 60_000 });
    await store().putGrant(grant);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, index) => store().consumeGrant(grant.token_hash, NOW + index)),
    );
    const winners = results.filter((result) => result !== undefined);
    expect(winners).toStrictEqual([grant]);
  });

  it('finds unconsumed, unexpired grants by tool, arguments digest and run, oldest first', async () => {
    const digest = digestOf('{"amount":1200}');
    const grants: StoredGrant[] = [
      makeGrant({ run_id: 'run-1', call_id: 'call-1', arguments_digest: digest, expires_at: NOW + 1000 }),
      makeGrant({ run_id: 'run-2', call_id: 'call-9', arguments_digest: digest, expires_at: NOW + 2000 }),
      makeGrant({ run_id: 'run-1', call_id: 'call-2', arguments_digest: digest, expires_at: NOW + 3000 }),
      makeGrant({ run_id: 'run-1', call_id: 'call-3', arguments_digest: digest, expires_at: NOW }),
      makeGrant({ run_id: 'run-1', call_id: 'call-4', arguments_digest: digestOf('{"amount":5}') }),
      makeGrant({ run_id: 'run-1', call_id: 'call-5', arguments_digest: digest, tool: 'delete_invoice' }),
      makeGrant({ run_id: 'run-1', call_id: 'call-6', arguments_digest: digest, expires_at: NOW + 5000 }),
    ];
    for (const grant of grants) await store().putGrant(grant);
    const consumed = grants[6] as StoredGrant;
    expect(await store().consumeGrant(consumed.token_hash, NOW)).toBeDefined();

    const calls = (list: StoredGrant[]) => list.map((grant) => grant.call_id);
    const query = { tool: 'send_invoice', arguments_digest: digest, now: NOW };
    expect(calls(await store().findGrants(query))).toEqual(['call-1', 'call-9', 'call-2']);
    expect(calls(await store().findGrants({ ...query, run_id: 'run-1' }))).toEqual(['call-1', 'call-2']);
    expect(calls(await store().findGrants({ ...query, run_id: 'run-3' }))).toEqual([]);
    expect(calls(await store().findGrants({ ...query, now: NOW + 1500 }))).toEqual(['call-9', 'call-2']);
    expect(await store().findGrants({ ...query, run_id: 'run-2' })).toStrictEqual([grants[1]]);
  });
}
