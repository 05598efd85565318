import type { CheckpointRow } from '@callgate/core';
import type { Opening } from '@callgate/protocol';
import { expect, it } from 'vitest';
import { digestOf, hex } from './fixtures.js';
import type { CurrentStore } from './store-contract.js';

function checkpoint(size: number): CheckpointRow {
  const root = new Uint8Array(32).fill(size % 256);
  return {
    size,
    root,
    note: `callgate.example/log\n${size}\n${Buffer.from(root).toString('base64')}\n\n— callgate.example/log sig${size}\n`,
    ts: 1_700_000_000_000 + size,
  };
}

const comparable = (row: CheckpointRow | undefined) => row && { ...row, root: hex(row.root) };

export function settingsContract(store: CurrentStore): void {
  it('keeps idempotency keys per tool', async () => {
    expect(await store().getIdempotencyKey('send_invoice', 'inv-7')).toBeUndefined();
    await store().putIdempotencyKey('send_invoice', 'inv-7', 'call-1');
    await store().putIdempotencyKey('refund_invoice', 'inv-7', 'call-2');
    expect(await store().getIdempotencyKey('send_invoice', 'inv-7')).toBe('call-1');
    expect(await store().getIdempotencyKey('refund_invoice', 'inv-7')).toBe('call-2');
    expect(await store().getIdempotencyKey('send_invoice', 'inv-8')).toBeUndefined();
  });

  it('keeps checkpoints: latest is the largest, listed by size within a closed range', async () => {
    expect(await store().latestCheckpoint()).toBeUndefined();
    for (const size of [10, 30, 20, 40]) await store().putCheckpoint(checkpoint(size));
    expect(comparable(await store().latestCheckpoint())).toEqual(comparable(checkpoint(40)));
    expect((await store().listCheckpoints(15, 40)).map(comparable)).toEqual(
      [20, 30, 40].map((size) => comparable(checkpoint(size))),
    );
    expect((await store().listCheckpoints(10, 10)).map((row) => row.size)).toEqual([10]);
    expect(await store().listCheckpoints(41, 100)).toEqual([]);
    const root = (await store().latestCheckpoint())?.root;
    expect(root).toBeInstanceOf(Uint8Array);
    expect(root?.length).toBe(32);
  });

  it('keeps openings and returns those asked for, in the order asked, skipping unknown ones', async () => {
    const openings: Opening[] = [
      {
        commitment: digestOf('a'),
        salt: 'c2FsdC1h',
        value: { amount: 1200, note: 'naïve ☃', list: [1, null, true] },
      },
      { commitment: digestOf('b'), salt: 'c2FsdC1i', value: 'plain text' },
      { commitment: digestOf('c'), salt: 'c2FsdC1j', value: [] },
      { commitment: digestOf('d'), salt: 'c2FsdC1k', value: null },
    ];
    await store().putOpenings(openings);
    await store().putOpenings([]);
    const asked = [digestOf('c'), digestOf('missing'), digestOf('a'), digestOf('d')];
    expect(await store().getOpenings(asked)).toStrictEqual([openings[2], openings[0], openings[3]]);
    expect(await store().getOpenings([])).toEqual([]);
  });

  it('keeps meta values, a later set replacing an earlier one', async () => {
    expect(await store().getMeta('origin')).toBeUndefined();
    await store().setMeta('origin', 'callgate.example/log');
    await store().setMeta('other', '');
    expect(await store().getMeta('origin')).toBe('callgate.example/log');
    await store().setMeta('origin', 'callgate.example/log2');
    expect(await store().getMeta('origin')).toBe('callgate.example/log2');
    expect(await store().getMeta('other')).toBe('');
  });
}
