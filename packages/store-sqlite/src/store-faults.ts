// Store faults: a full disk or an I/O error is not a bug of the request that met it. Such a write
// rejects with CallgateError `store-unavailable`, the store reports itself unavailable (health
// says `degraded`), and the next write that commits — the disk has room again — clears it.
// Nothing is lost that was acknowledged: a failed batch was never acknowledged.

import type { StoreStatus } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import Database from 'better-sqlite3';

/** SQLite result codes (primary and extended) that mean the store cannot write right now. */
const FAULT_CODES = /^SQLITE_(FULL|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL)/;

/** True for a SQLite error that is the store's fault (disk full, I/O error), not the request's. */
export function isStoreFault(error: unknown): boolean {
  return error instanceof Database.SqliteError && FAULT_CODES.test(error.code);
}

/** Tracks whether the store's writes are failing, and turns such failures into `store-unavailable`. */
export class StoreFaults {
  readonly #path: string;
  #fault: { reason: string; since: number } | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  /** The error a failed write rejects with: `store-unavailable` for a fault, else `error` itself. */
  failed(error: unknown): unknown {
    if (!isStoreFault(error)) return error;
    const code = (error as InstanceType<typeof Database.SqliteError>).code;
    const reason = `${code}: ${(error as Error).message}`;
    this.#fault ??= { reason, since: Date.now() };
    this.#fault.reason = reason;
    return new CallgateError(
      'store-unavailable',
      `the store cannot write (${reason}); nothing of this request was recorded. Writes resume once ${this.#path} can be written again`,
      { code },
      { cause: error },
    );
  }

  /** A write committed: the store writes again. */
  committed(): void {
    this.#fault = undefined;
  }

  get faulty(): boolean {
    return this.#fault !== undefined;
  }

  status(): StoreStatus {
    return this.#fault === undefined
      ? { status: 'ok' }
      : { status: 'unavailable', reason: this.#fault.reason, since: this.#fault.since };
  }
}
