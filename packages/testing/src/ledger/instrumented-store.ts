// Test helper: a MemoryStore whose record writes can be counted, held back and made to fail.

import { type CheckpointRow, MemoryStore, type RunHead, type StoredRecord } from '@callgate/core';

/** A MemoryStore that records each `appendRecords` call and can delay or fail them. */
export class InstrumentedStore extends MemoryStore {
  /** The seqs of each `appendRecords` call, in call order. */
  readonly writes: number[][] = [];
  /** How many of the next writes fail (with "disk full"). */
  failWrites = 0;
  /** How many of the next checkpoint writes fail. */
  failCheckpoints = 0;
  /** How many of the next run head reads fail. */
  failRunHeads = 0;
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  /** Holds every record write back until {@link release}. */
  hold(): void {
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  /** Lets held writes go on. */
  release(): void {
    this.#release?.();
    this.#held = undefined;
  }

  override async appendRecords(records: StoredRecord[]): Promise<void> {
    this.writes.push(records.map((stored) => stored.record.seq));
    if (this.#held !== undefined) await this.#held;
    if (this.failWrites > 0) {
      this.failWrites -= 1;
      throw new Error('disk full');
    }
    await super.appendRecords(records);
  }

  override async putCheckpoint(checkpoint: CheckpointRow): Promise<void> {
    if (this.failCheckpoints > 0) {
      this.failCheckpoints -= 1;
      throw new Error('checkpoint table locked');
    }
    await super.putCheckpoint(checkpoint);
  }

  override async runHead(runId: string): Promise<RunHead | undefined> {
    if (this.failRunHeads > 0) {
      this.failRunHeads -= 1;
      throw new Error('database is locked');
    }
    return super.runHead(runId);
  }
}
