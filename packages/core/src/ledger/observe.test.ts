// Observers of appends (metrics, traces): told synchronously, then of the durable record and its
// digest; never able to change what is recorded.

import { testEngine } from '@callgate/testing';
import { describe, expect, it } from 'vitest';

describe('Ledger.observeAppends', () => {
  it('tells each append in the caller’s turn, then its record and digest once durable', async () => {
    const { ledger, runId, store } = await testEngine();
    const seen: string[] = [];
    const durable: { seq: number; digest: string }[] = [];
    const stop = ledger.observeAppends((run, body) => {
      seen.push(`${run}:${body.type}`);
      return (outcome) => {
        if ('record' in outcome) durable.push({ seq: outcome.record.seq, digest: outcome.digest });
      };
    });
    const throwing = ledger.observeAppends(() => {
      throw new Error('an observer that fails');
    });
    const pending = ledger.append(runId, { type: 'gap', reason: 'test', from_ts: 1, to_ts: 2, calls: 0 });
    expect(seen).toEqual([`${runId}:gap`]);
    await pending;
    await ledger.append(runId, { type: 'run-end', status: 'completed', calls: 0 });
    const records = await store.readRunRecords(runId);
    expect(durable.map((entry) => entry.seq)).toEqual([records.at(-2)?.seq, records.at(-1)?.seq]);
    // The digest an observer gets is the one the run's next record chains to.
    expect(records.at(-1)?.prev).toBe(durable[0]?.digest);
    stop();
    throwing();
    await ledger
      .append(runId, { type: 'gap', reason: 'after', from_ts: 1, to_ts: 2, calls: 0 })
      .catch(() => {});
    expect(seen).toHaveLength(2);
  });
});
