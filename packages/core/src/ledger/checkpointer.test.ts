// The frontier folded as writes are acknowledged (checkpointer.ts): whatever the interleaving of
// appends, writes in flight while more records queue, failed writes, background and explicit
// checkpoints, every checkpoint signs the RFC 9162 root of exactly the durable records.
import type { RecordBody } from '@callgate/protocol';
import { FIXTURE_ORIGIN, fixtureClock, fixtureSigner } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../crypto.js';
import { MemoryStore } from '../store/memory-store.js';
import type { StoredRecord } from '../store/store.js';
import { Ledger } from './ledger.js';
import { merkleRoot } from './merkle.js';
import { openCheckpoint } from './signed-note.js';

const signer = fixtureSigner();
const message = (index: number): RecordBody => ({
  type: 'model-message',
  role: 'user',
  content_commitment: `sha256:${sha256(`message ${index}`).toString('hex')}`,
  tool_calls: [],
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A MemoryStore whose record writes take one event-loop turn (so that appends queue behind a
 * write in flight) and whose writes numbered in `failing` (0-based, in call order) fail.
 */
class SlowStore extends MemoryStore {
  readonly failing: ReadonlySet<number>;
  #writes = 0;

  constructor(failing: readonly number[]) {
    super();
    this.failing = new Set(failing);
  }

  override async appendRecords(records: StoredRecord[]): Promise<void> {
    const write = this.#writes++;
    await tick();
    if (this.failing.has(write)) throw new Error('disk full');
    await super.appendRecords(records);
  }
}

/** One step: appends made in one turn (awaited or left in flight), or an explicit checkpoint. */
const step = fc.oneof(
  fc.record({
    appends: fc.array(fc.constantFrom('run-a', 'run-b', 'run-c'), { minLength: 1, maxLength: 6 }),
    settle: fc.boolean(),
  }),
  fc.constant({ checkpoint: true as const }),
);

async function expectRootOfDurable(store: SlowStore, ledger: Ledger): Promise<void> {
  const checkpoint = await ledger.checkpoint();
  const size = await store.ledgerSize();
  // An empty log has no checkpoint.
  expect(checkpoint?.size).toBe(size === 0 ? undefined : size);
  if (checkpoint === undefined) return;
  const leaves = await store.readLeafHashes(0, size);
  expect(Buffer.from(checkpoint.root).equals(merkleRoot(leaves))).toBe(true);
  expect(openCheckpoint(checkpoint.note, signer.verifierKey).ok).toBe(true);
}

describe('Checkpointer (folding on acknowledgement)', () => {
  it('signs the root of exactly the durable records, with writes failing while others queue', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 25 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { maxLength: 6 }),
        fc.integer({ min: 1, max: 9 }),
        async (steps, failing, every) => {
          const store = new SlowStore(failing);
          const ledger = await Ledger.open(store, {
            signer,
            origin: FIXTURE_ORIGIN,
            clock: fixtureClock(),
            checkpointEveryRecords: every,
          });
          let index = 0;
          let inFlight: Promise<unknown>[] = [];
          for (const item of steps) {
            if ('appends' in item) {
              // A failed write rejects its appends: expected here, the roots are what is checked.
              inFlight.push(
                ...item.appends.map((run) => ledger.append(run, message(index++)).catch(() => undefined)),
              );
              if (item.settle) {
                await Promise.allSettled(inFlight);
                inFlight = [];
              }
            } else {
              await expectRootOfDurable(store, ledger);
            }
            // Background checkpoints (every `every` records) and writes go on between steps.
            await tick();
          }
          await Promise.allSettled(inFlight);
          await expectRootOfDurable(store, ledger);
          await ledger.close();
        },
      ),
      { numRuns: 80 },
    );
  });
});
