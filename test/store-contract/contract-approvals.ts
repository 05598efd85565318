import type { Approval } from '@callgate/protocol';
import { expect, it } from 'vitest';
import { makeApproval } from './fixtures.js';
import type { CurrentStore } from './store-contract.js';

export function approvalsContract(store: CurrentStore): void {
  it('creates and reads back an approval, with and without arguments', async () => {
    const withArguments = makeApproval();
    const { arguments: _omitted, ...withoutArguments } = makeApproval();
    await store().createApproval(withArguments);
    await store().createApproval(withoutArguments);
    expect(await store().getApproval(withArguments.id)).toStrictEqual(withArguments);
    expect(await store().getApproval(withoutArguments.id)).toStrictEqual(withoutArguments);
    expect(await store().getApproval('approval-missing')).toBeUndefined();
  });

  it('keeps the values a framework injects into the call, and keeps them through its answer', async () => {
    const injected = { user_id: 'u-42', limits: { daily: 100, currency: 'EUR' }, tags: ['a', 'ü'] };
    const approval = makeApproval({ injected });
    const plain = makeApproval();
    await store().createApproval(approval);
    await store().createApproval(plain);
    expect(await store().getApproval(approval.id)).toStrictEqual(approval);
    expect((await store().getApproval(plain.id))?.injected).toBeUndefined();
    expect(
      (await store().listApprovals({ run_id: approval.run_id })).find((item) => item.id === approval.id)
        ?.injected,
    ).toStrictEqual(injected);
    const resolved = await store().resolveApproval(approval.id, {
      status: 'approved',
      resolved_at: approval.created_at + 1,
    });
    expect(resolved?.injected).toStrictEqual(injected);
  });

  it('refuses a second approval with the same id and keeps the first', async () => {
    const approval = makeApproval();
    await store().createApproval(approval);
    await expect(store().createApproval({ ...approval, reason: 'other' })).rejects.toThrow();
    expect((await store().getApproval(approval.id))?.reason).toBe(approval.reason);
  });

  it('lists approvals oldest first, filtered by status and run, with a limit', async () => {
    const approvals = [
      makeApproval({ id: 'a-3', created_at: 3000, run_id: 'run-1' }),
      makeApproval({ id: 'a-1', created_at: 1000, run_id: 'run-2' }),
      makeApproval({ id: 'a-2', created_at: 2000, run_id: 'run-1', status: 'approved', resolved_at: 2500 }),
      makeApproval({ id: 'a-4', created_at: 4000, run_id: 'run-2' }),
    ];
    for (const approval of approvals) await store().createApproval(approval);
    const ids = (list: Approval[]) => list.map((approval) => approval.id);
    expect(ids(await store().listApprovals())).toEqual(['a-1', 'a-2', 'a-3', 'a-4']);
    expect(ids(await store().listApprovals({ status: 'pending' }))).toEqual(['a-1', 'a-3', 'a-4']);
    expect(ids(await store().listApprovals({ status: 'approved' }))).toEqual(['a-2']);
    expect(ids(await store().listApprovals({ status: 'denied' }))).toEqual([]);
    expect(ids(await store().listApprovals({ run_id: 'run-1' }))).toEqual(['a-2', 'a-3']);
    expect(ids(await store().listApprovals({ run_id: 'run-2', status: 'pending' }))).toEqual(['a-1', 'a-4']);
    expect(ids(await store().listApprovals({ status: 'pending', limit: 2 }))).toEqual(['a-1', 'a-3']);
    expect(await store().listApprovals({ status: 'pending' })).toStrictEqual([
      approvals[1],
      approvals[0],
      approvals[3],
    ]);
  });

  it('resolves a pending approval exactly once', async () => {
    const approval = makeApproval();
    await store().createApproval(approval);
    const resolved = await store().resolveApproval(approval.id, {
      status: 'denied',
      resolved_at: approval.created_at + 10,
      reviewer: 'ana@example.com',
      response_reason: 'edited the amount',
      edited: true,
    });
    const expected: Approval = {
      ...approval,
      status: 'denied',
      resolved_at: approval.created_at + 10,
      reviewer: 'ana@example.com',
      response_reason: 'edited the amount',
      edited: true,
    };
    expect(resolved).toStrictEqual(expected);
    expect(await store().getApproval(approval.id)).toStrictEqual(expected);

    const again = await store().resolveApproval(approval.id, {
      status: 'approved',
      resolved_at: approval.created_at + 20,
      reviewer: 'bob@example.com',
    });
    expect(again).toBeUndefined();
    expect(await store().getApproval(approval.id)).toStrictEqual(expected);
    expect(await store().listApprovals({ status: 'pending' })).toEqual([]);
  });

  it('resolves with only a status and a time (expiry, withdrawal)', async () => {
    const approval = makeApproval();
    await store().createApproval(approval);
    const expired = await store().resolveApproval(approval.id, { status: 'expired', resolved_at: 99 });
    expect(expired).toStrictEqual({ ...approval, status: 'expired', resolved_at: 99 });
  });

  it('does not resolve an unknown approval', async () => {
    expect(
      await store().resolveApproval('approval-missing', { status: 'approved', resolved_at: 1 }),
    ).toBeUndefined();
    expect(await store().getApproval('approval-missing')).toBeUndefined();
  });

  it('of 100 concurrent resolutions of one approval exactly one wins, and its answer is kept', async () => {
    const approval = makeApproval();
    await store().createApproval(approval);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        store().resolveApproval(approval.id, {
          status: index % 2 === 0 ? 'approved' : 'denied',
          resolved_at: approval.created_at + index,
          reviewer: `reviewer-${index}`,
        }),
      ),
    );
    const winners = results.filter((result) => result !== undefined);
    expect(winners).toHaveLength(1);
    const stored = await store().getApproval(approval.id);
    expect(stored).toStrictEqual(winners[0]);
    expect(stored?.status).not.toBe('pending');
  });
}
