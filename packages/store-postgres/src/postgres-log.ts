import type { CheckpointRow, Logger, RunHead, StoredRecord } from '@callgate/core';
import { silentLogger } from '@callgate/core';
import { canonicalJson } from '@callgate/core/crypto';
import type { LedgerRecord, Opening } from '@callgate/protocol';
import { CallgateError } from '@callgate/protocol';
import type pg from 'pg';
import { describeUrl, type PostgresStoreOptions, storeError } from './database.js';
import { rowToCheckpoint, rowToOpening } from './rows.js';
import { insertCheckpoint, insertRecords, lockHead, PostgresSequencer, transaction } from './sequencer.js';

/**
 * The connection {@link PostgresStore} is built on, and the log's tables: the pool, its
 * sequencer and checkpoint lease, errors named after the database; records, run heads,
 * checkpoints, openings and settings. {@link PostgresStore} adds the gate's tables (runs, calls,
 * approvals, grants, API keys).
 */
export abstract class PostgresLog {
  /** What an acknowledged write survives (see {@link durabilityOf}); read from the server at open. */
  synchronous: 'NORMAL' | 'FULL' = 'FULL';
  readonly sequencer: PostgresSequencer;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The pool every query goes through (other parts of the store, e.g. notifications, share it). */
  readonly pool: pg.Pool;
  readonly #where: string;
  protected readonly logger: Logger;
  readonly #config: pg.ClientConfig;
  protected closed = false;
  #appends: Promise<void> = Promise.resolve();
  /** Connections of other parts (e.g. notifications) to end with the store. */
  readonly #closers = new Set<() => Promise<void>>();

  protected constructor(
    pool: pg.Pool,
    options: PostgresStoreOptions,
    schema: string,
    config: pg.ClientConfig,
  ) {
    this.pool = pool;
    this.schema = schema;
    this.#config = config;
    this.#where = describeUrl(options.url);
    this.logger = options.logger ?? silentLogger;
    this.sequencer = new PostgresSequencer({
      pool,
      clientConfig: config,
      leaseKey: `callgate:${schema}:checkpoint-lease`,
      logger: this.logger,
      mapError: (error) => this.errorOf(error),
    });
  }
  /** Settings of a new dedicated connection to this store's schema (e.g. for LISTEN). */
  get clientConfig(): pg.ClientConfig {
    return this.#config;
  }
  /** Where the store is (URL without password), for messages. */
  get where(): string {
    return this.#where;
  }
  protected errorOf(error: unknown, conflict?: string): unknown {
    return storeError(error, this.#where, conflict);
  }
  protected async query(text: string, values: unknown[] = [], conflict?: string): Promise<pg.QueryResult> {
    if (this.closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      return await this.pool.query(text, values);
    } catch (error) {
      throw this.errorOf(error, conflict);
    }
  }
  /** True when PostgreSQL answers a trivial query within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      });
      await Promise.race([this.query('SELECT 1'), timeout]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
  /**
   * Appends records built elsewhere (their `seq` already set), all or none, in one transaction
   * holding the log's head row: the batch must start at the log's size and be consecutive.
   * Engines sharing the log append through {@link sequencer} instead.
   * @throws CallgateError `conflict` for a batch out of order or a (run_id, run_seq) already stored.
   */
  appendRecords(records: StoredRecord[]): Promise<void> {
    // Batches go to PostgreSQL in call order (each must start where the previous ended).
    const append = this.#appends.then(() => this.#appendNow(records));
    this.#appends = append.catch(() => {});
    return append;
  }
  async #appendNow(records: StoredRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      await transaction(this.pool, async (client) => {
        const range = await lockHead(client);
        for (const [index, stored] of records.entries()) {
          if (stored.record.seq !== range.size)
            throw new CallgateError(
              'conflict',
              `append out of order: seq ${stored.record.seq}, log size ${range.size - index}`,
              { seq: stored.record.seq },
            );
          range.append(stored.leaf_hash);
        }
        await insertRecords(client, records, range);
      });
    } catch (error) {
      if (error instanceof CallgateError) throw error;
      throw this.errorOf(error, 'a record with this run_id and run_seq exists');
    }
  }
  async ledgerSize(): Promise<number> {
    const { rows } = await this.query('SELECT size FROM ledger_head WHERE id = 1');
    return (rows[0]?.size as number | undefined) ?? 0;
  }
  async readRecords(from: number, to: number): Promise<LedgerRecord[]> {
    const { rows } = await this.query(
      'SELECT canonical FROM records WHERE seq >= $1 AND seq < $2 ORDER BY seq',
      [from, to],
    );
    return rows.map((row) => JSON.parse(row.canonical as string) as LedgerRecord);
  }
  async readRunRecords(runId: string): Promise<LedgerRecord[]> {
    const { rows } = await this.query('SELECT canonical FROM records WHERE run_id = $1 ORDER BY run_seq', [
      runId,
    ]);
    return rows.map((row) => JSON.parse(row.canonical as string) as LedgerRecord);
  }
  async readLeafHashes(from: number, to: number): Promise<Uint8Array[]> {
    const { rows } = await this.query(
      'SELECT leaf_hash FROM records WHERE seq >= $1 AND seq < $2 ORDER BY seq',
      [from, to],
    );
    return rows.map((row) => new Uint8Array(row.leaf_hash as Buffer));
  }
  async runHead(runId: string): Promise<RunHead | undefined> {
    const { rows } = await this.query(
      'SELECT run_seq, digest FROM records WHERE run_id = $1 ORDER BY run_seq DESC LIMIT 1',
      [runId],
    );
    const row = rows[0];
    return row && { run_seq: row.run_seq as number, digest: row.digest as string };
  }
  async putCheckpoint(checkpoint: CheckpointRow): Promise<void> {
    if (this.closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      await insertCheckpoint(this.pool, checkpoint);
    } catch (error) {
      throw error instanceof CallgateError ? error : this.errorOf(error);
    }
  }
  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    const { rows } = await this.query(
      'SELECT size, root, note, ts FROM checkpoints ORDER BY size DESC LIMIT 1',
    );
    return rows[0] && rowToCheckpoint(rows[0]);
  }
  async listCheckpoints(fromSize: number, toSize: number): Promise<CheckpointRow[]> {
    const { rows } = await this.query(
      'SELECT size, root, note, ts FROM checkpoints WHERE size >= $1 AND size <= $2 ORDER BY size',
      [fromSize, toSize],
    );
    return rows.map(rowToCheckpoint);
  }
  async putOpenings(openings: Opening[]): Promise<void> {
    if (openings.length === 0) return;
    await this.query(
      `INSERT INTO openings (commitment, salt, value)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
       ON CONFLICT (commitment) DO UPDATE SET salt = excluded.salt, value = excluded.value`,
      [
        openings.map((opening) => opening.commitment),
        openings.map((opening) => opening.salt),
        openings.map((opening) => canonicalJson(opening.value)),
      ],
    );
  }
  async getOpenings(commitments: string[]): Promise<Opening[]> {
    if (commitments.length === 0) return [];
    const { rows } = await this.query(
      'SELECT commitment, salt, value FROM openings WHERE commitment = ANY($1::text[])',
      [commitments],
    );
    const found = new Map(rows.map((row) => [row.commitment as string, rowToOpening(row)]));
    return commitments.flatMap((commitment) => {
      const opening = found.get(commitment);
      return opening ? [opening] : [];
    });
  }
  async getMeta(key: string): Promise<string | undefined> {
    const { rows } = await this.query('SELECT value FROM meta WHERE key = $1', [key]);
    return rows[0]?.value as string | undefined;
  }
  async setMeta(key: string, value: string): Promise<void> {
    await this.query(
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [key, value],
    );
  }
  /** Registers `close` to run when the store closes (a dedicated connection of another part). */
  onClose(close: () => Promise<void>): void {
    this.#closers.add(close);
  }
  /** Gives up the checkpoint lease and closes every connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const close of this.#closers) await close().catch(() => {});
    await this.sequencer.releaseLease();
    await this.pool.end();
  }
}
