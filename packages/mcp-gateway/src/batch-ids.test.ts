import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitDuplicateIds } from './batch-ids.js';
import { standIn } from './exact-json.js';

/** Ids from a small pool, so batches repeat them: strings, numbers, "1" beside 1, a stand-in. */
const id = fc.constantFrom<string | number>(1, 2, '1', '2', 'a', standIn('12345678901234567890'));
const message = fc.oneof(
  id.map((value) => ({ jsonrpc: '2.0', id: value, method: 'tools/call', params: { name: 'x' } })),
  id.map((value) => ({ jsonrpc: '2.0', id: value, result: {} })),
  fc.constant({ jsonrpc: '2.0', method: 'notifications/progress', params: {} }),
);

describe('a batch whose requests share an id', () => {
  it('refuses each request whose id another request or one in progress uses, once, and serves every other message', () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 8 }),
        fc.subarray([1, '1', 'a']),
        (batch, busy) => {
          const { served, refused } = splitDuplicateIds(batch, (value) => busy.includes(value));
          const isRequest = (item: object) => 'method' in item && 'id' in item;
          const requests = batch.filter(isRequest) as Array<{ id: string | number }>;
          // A request in progress counts as one more use of its id.
          const uses = (value: unknown) =>
            requests.filter((request) => request.id === value).length +
            (busy.includes(value as never) ? 1 : 0);
          // Every message is either served or refused, exactly once, in its order.
          expect(served.length + refused.length).toBe(batch.length);
          expect(served).toEqual(
            batch.filter((item) => !isRequest(item) || uses((item as { id: unknown }).id) < 2),
          );
          for (const answer of refused) {
            expect(answer.error.code).toBe(-32600);
            expect(uses(answer.id)).toBeGreaterThan(1);
          }
          expect(refused.map((answer) => answer.id)).toEqual(
            requests.filter((request) => uses(request.id) > 1).map((request) => request.id),
          );
          // What is served has no request id twice.
          const servedIds = (
            served.filter((item) => isRequest(item as object)) as Array<{ id: unknown }>
          ).map((item) => item.id);
          expect(new Set(servedIds).size).toBe(servedIds.length);
        },
      ),
    );
  });

  it('quotes the id as sent: a number by its digits, a string quoted', () => {
    const { refused } = splitDuplicateIds([
      { jsonrpc: '2.0', id: standIn('12345678901234567890'), method: 'ping' },
      { jsonrpc: '2.0', id: standIn('12345678901234567890'), method: 'ping' },
      { jsonrpc: '2.0', id: '7', method: 'ping' },
      { jsonrpc: '2.0', id: '7', method: 'ping' },
    ]);
    expect(refused.map((answer) => answer.error.message)).toEqual([
      expect.stringContaining('the id 12345678901234567890;'),
      expect.stringContaining('the id 12345678901234567890;'),
      expect.stringContaining('the id "7";'),
      expect.stringContaining('the id "7";'),
    ]);
  });
});
