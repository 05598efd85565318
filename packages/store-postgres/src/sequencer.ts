// The log's sequencer in PostgreSQL: every append locks the one `ledger_head` row, reads the
// size, the frontier and the heads of its runs in that transaction, stores the records and the
// new frontier, and commits. The checkpoint lease is a session advisory lock held by one
// dedicated connection: it ends with that connection.
import {
  type CheckpointRow,
  CompactRange,
  type LogFrontier,
  type Logger,
  type LogSequencer,
  type RunHead,
  type SequencedAppend,
  type StoredRecord,
} from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import pg from 'pg';
import {
  byteaArray,
  insertCheckpoint,
  insertRecordsText,
  type PendingWrite,
  script,
  settle,
} from './log-sql.js';
import { rowToCheckpoint } from './rows.js';

// The store's SQL helpers, where the store has always imported them from.
export {
  insertCheckpoint,
  insertRecords,
  literal,
  lockHead,
  script,
  transaction,
  upsertCallText,
} from './log-sql.js';

/** What the sequencer needs from its store. */
export interface SequencerContext {
  pool: pg.Pool;
  /** Settings of a new dedicated connection (the lease's). */
  clientConfig: pg.ClientConfig;
  /** The advisory lock key (text, hashed by PostgreSQL's hashtext) of this log's lease. */
  leaseKey: string;
  logger: Logger;
  /** Maps a driver error to callgate's (see storeError). */
  mapError: (error: unknown) => unknown;
}

/** The PostgreSQL {@link LogSequencer}; see the file header. */
export class PostgresSequencer implements LogSequencer {
  readonly #context: SequencerContext;
  /** Row writes waiting for the next append's transaction (see {@link defer}). */
  #pending: PendingWrite[] = [];
  #appending = 0;
  #lease: pg.Client | undefined;
  #leaseHeld = false;
  #leaseTaking: Promise<boolean> | undefined;

  constructor(context: SequencerContext) {
    this.#context = context;
  }

  /**
   * Two round trips under the head row's lock, the only thing serialised across replicas: one
   * that begins, locks and reads the heads of the batch's runs, one that stores the records and the
   * frontier and commits (multi-statement simple queries, values as escaped literals).
   */
  async append(entries: SequencedAppend[]): Promise<Array<StoredRecord | Error>> {
    if (entries.length === 0) return [];
    let client: pg.PoolClient | undefined;
    let broken = false;
    // The call rows written so far commit with these records, never before them.
    const writes = this.#pending.splice(0);
    this.#appending++;
    try {
      client = await this.#context.pool.connect();
      const runIds = [...new Set(entries.map((entry) => entry.run_id))];
      const read = (await client.query(
        `BEGIN;
         SELECT size, frontier FROM ledger_head WHERE id = 1 FOR UPDATE;
         SELECT DISTINCT ON (run_id) run_id, run_seq, digest FROM records
           WHERE run_id IN (${runIds.map((id) => pg.escapeLiteral(id)).join(', ')}) ORDER BY run_id, run_seq DESC`,
      )) as unknown as pg.QueryResult[];
      const headRow = read[1]?.rows[0] as { size: number; frontier: Buffer[] } | undefined;
      if (headRow === undefined) throw new CallgateError('internal', 'the ledger_head row is missing');
      const range = new CompactRange(
        headRow.size,
        headRow.frontier.map((hash) => new Uint8Array(hash)),
      );
      const heads = new Map<string, RunHead>(
        (read[2]?.rows ?? []).map((row) => [row.run_id as string, row as RunHead]),
      );
      const results: Array<StoredRecord | Error> = [];
      const stored: StoredRecord[] = [];
      for (const entry of entries) {
        const head = heads.get(entry.run_id);
        let sealed: StoredRecord;
        try {
          sealed = entry.seal({
            seq: range.size,
            run_seq: head === undefined ? 0 : head.run_seq + 1,
            prev: head === undefined ? null : head.digest,
          });
        } catch (error) {
          results.push(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        range.append(sealed.leaf_hash);
        heads.set(entry.run_id, { run_seq: sealed.record.run_seq, digest: sealed.digest });
        stored.push(sealed);
        results.push(sealed);
      }
      const written = (await client.query(
        [
          ...(stored.length === 0 ? [] : [insertRecordsText(stored)]),
          ...writes.map((write) => write.statement),
          `UPDATE ledger_head SET size = ${range.size}, frontier = ${byteaArray(range.hashes)} WHERE id = 1`,
          'COMMIT',
        ].join(';\n'),
      )) as unknown as pg.QueryResult[];
      settle(writes, written.slice(stored.length === 0 ? 0 : 1));
      return results;
    } catch (error) {
      if (client !== undefined) await client.query('ROLLBACK').catch(() => (broken = true));
      const mapped = this.#context.mapError(error);
      for (const write of writes) write.reject(mapped);
      throw mapped;
    } finally {
      client?.release(broken);
      this.#appending--;
      if (this.#pending.length > 0) setImmediate(() => this.#flush());
    }
  }

  /**
   * Runs a row write (one statement, values as literals) in the transaction of the next append,
   * so that the row is never durable without the records written with it in the same turn (a
   * crash between two commits would leave e.g. a decided call, or an approval, the ledger never
   * recorded). When no append takes it in this turn of the event loop, it commits on its own.
   * With `conflict`, a statement that changed no row rejects with CallgateError `conflict`.
   * Resolves once committed.
   */
  defer(statement: string, conflict?: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ statement, resolve, reject, ...(conflict !== undefined ? { conflict } : {}) });
      if (this.#pending.length === 1) setImmediate(() => this.#flush());
    });
  }

  /** Commits the waiting writes on their own, unless an append is under way (it takes them). */
  async #flush(): Promise<void> {
    if (this.#appending > 0 || this.#pending.length === 0) return;
    const writes = this.#pending.splice(0);
    try {
      const results = await script(
        this.#context.pool,
        ['BEGIN', ...writes.map((write) => write.statement), 'COMMIT'].join(';\n'),
      );
      settle(writes, results.slice(1));
    } catch (error) {
      const mapped = this.#context.mapError(error);
      for (const write of writes) write.reject(mapped);
    }
  }

  async frontier(): Promise<LogFrontier> {
    const { rows } = await this.#context.pool
      .query<{ size: number; frontier: Buffer[] }>('SELECT size, frontier FROM ledger_head WHERE id = 1')
      .catch((error: unknown) => {
        throw this.#context.mapError(error);
      });
    const row = rows[0];
    if (row === undefined) throw new CallgateError('internal', 'the ledger_head row is missing');
    return { size: row.size, hashes: row.frontier.map((hash) => new Uint8Array(hash)) };
  }

  async claimMeta(key: string, value: string): Promise<string> {
    const pool = this.#context.pool;
    try {
      await pool.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
        key,
        value,
      ]);
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key]);
      return rows[0]?.value ?? value;
    } catch (error) {
      throw this.#context.mapError(error);
    }
  }

  holdLease(): Promise<boolean> {
    if (this.#leaseHeld) return Promise.resolve(true);
    this.#leaseTaking ??= this.#takeLease().finally(() => {
      this.#leaseTaking = undefined;
    });
    return this.#leaseTaking;
  }

  async #takeLease(): Promise<boolean> {
    let client = this.#lease;
    try {
      if (client === undefined) {
        client = new pg.Client(this.#context.clientConfig);
        const opened = client;
        opened.on('error', (error) => this.#lost(opened, error));
        opened.on('end', () => this.#lost(opened, new Error('connection ended')));
        await opened.connect();
        this.#lease = opened;
      }
      const { rows } = await client.query<{ held: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1)) AS held',
        [this.#context.leaseKey],
      );
      this.#leaseHeld = rows[0]?.held === true && this.#lease === client;
      if (this.#leaseHeld)
        this.#context.logger.info({ lease: this.#context.leaseKey }, 'checkpoint lease taken');
      return this.#leaseHeld;
    } catch (error) {
      if (client !== undefined) this.#lost(client, error);
      return false;
    }
  }

  #lost(client: pg.Client, error: unknown): void {
    if (this.#lease !== client) return;
    if (this.#leaseHeld)
      this.#context.logger.warn(
        { lease: this.#context.leaseKey, error: String(error) },
        'checkpoint lease lost: this replica stops signing checkpoints',
      );
    this.#lease = undefined;
    this.#leaseHeld = false;
    client.end().catch(() => {});
  }

  async signUnderLease(
    sign: (frontier: LogFrontier, latest: CheckpointRow | undefined) => CheckpointRow | undefined,
  ): Promise<CheckpointRow | undefined> {
    const client = this.#lease;
    if (!this.#leaseHeld || client === undefined) return undefined;
    try {
      // REPEATABLE READ: the frontier and the latest checkpoint come from one snapshot.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const head = await client.query<{ size: number; frontier: Buffer[] }>(
        'SELECT size, frontier FROM ledger_head WHERE id = 1',
      );
      const latestRows = await client.query(
        'SELECT size, root, note, ts FROM checkpoints ORDER BY size DESC LIMIT 1',
      );
      const latest = latestRows.rows[0] === undefined ? undefined : rowToCheckpoint(latestRows.rows[0]);
      const row = head.rows[0];
      if (row === undefined) throw new CallgateError('internal', 'the ledger_head row is missing');
      const checkpoint = sign(
        { size: row.size, hashes: row.frontier.map((hash) => new Uint8Array(hash)) },
        latest,
      );
      if (checkpoint === undefined) {
        await client.query('COMMIT');
        return latest;
      }
      await insertCheckpoint(client, checkpoint);
      await client.query('COMMIT');
      return checkpoint;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      if (error instanceof CallgateError) throw error;
      this.#lost(client, error);
      return undefined;
    }
  }

  async releaseLease(): Promise<void> {
    const client = this.#lease;
    this.#lease = undefined;
    this.#leaseHeld = false;
    if (client !== undefined) await client.end().catch(() => {});
  }
}
