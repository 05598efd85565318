// SQL of the log's sequencer in PostgreSQL: transactions, multi-statement scripts, the
// `ledger_head` lock, record and checkpoint inserts, and literal statements for deferred writes.
import { type CheckpointRow, CompactRange, type StoredRecord } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import pg from 'pg';
import { CALL_COLUMNS, toBuffer } from './rows.js';

const CALL_UPDATE = CALL_COLUMNS.split(', ')
  .map((column) => `${column} = excluded.${column}`)
  .join(', ');

export type Queryable = Pick<pg.PoolClient, 'query'>;

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);

/** Runs `work` in a transaction on a pooled connection. */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch {
      broken = true;
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Runs a multi-statement text holding its own BEGIN … COMMIT on a pooled connection. On an error
 * PostgreSQL skips the rest and leaves the transaction aborted: it is rolled back here before the
 * connection returns to the pool. Returns one result per statement.
 */
export async function script(pool: pg.Pool, text: string): Promise<pg.QueryResult[]> {
  const client = await pool.connect();
  let broken = false;
  try {
    const results = (await client.query(text)) as unknown as pg.QueryResult[] | pg.QueryResult;
    return Array.isArray(results) ? results : [results];
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** Reads and locks the log's head row (size, frontier). */
export async function lockHead(client: Queryable): Promise<CompactRange> {
  const { rows } = await client.query<{ size: number; frontier: Buffer[] }>(
    'SELECT size, frontier FROM ledger_head WHERE id = 1 FOR UPDATE',
  );
  const row = rows[0];
  if (row === undefined) throw new CallgateError('internal', 'the ledger_head row is missing');
  return new CompactRange(
    row.size,
    row.frontier.map((hash) => new Uint8Array(hash)),
  );
}

/** Inserts sealed records and stores the frontier after them (inside the caller's transaction). */
export async function insertRecords(
  client: Queryable,
  records: StoredRecord[],
  range: CompactRange,
): Promise<void> {
  if (records.length === 0) return;
  await client.query(
    `INSERT INTO records (seq, run_id, run_seq, type, canonical, leaf_hash, digest)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::bytea[], $7::text[])`,
    [
      records.map((stored) => stored.record.seq),
      records.map((stored) => stored.record.run_id),
      records.map((stored) => stored.record.run_seq),
      records.map((stored) => stored.record.type),
      records.map((stored) => stored.canonical),
      records.map((stored) => toBuffer(stored.leaf_hash)),
      records.map((stored) => stored.digest),
    ],
  );
  await client.query('UPDATE ledger_head SET size = $1, frontier = $2 WHERE id = 1', [
    range.size,
    range.hashes.map(toBuffer),
  ]);
}

const hexBytes = (bytes: Uint8Array): string => `decode('${Buffer.from(bytes).toString('hex')}', 'hex')`;

/** A BYTEA[] literal. */
export function byteaArray(hashes: readonly Uint8Array[]): string {
  return hashes.length === 0 ? "'{}'::bytea[]" : `ARRAY[${hashes.map(hexBytes).join(', ')}]`;
}

/** The INSERT of sealed records, values as escaped literals (for a multi-statement query). */
export function insertRecordsText(records: StoredRecord[]): string {
  const rows = records.map(
    ({ record, canonical, leaf_hash, digest }) =>
      `(${record.seq}, ${pg.escapeLiteral(record.run_id)}, ${record.run_seq}, ${pg.escapeLiteral(record.type)}, ${pg.escapeLiteral(canonical)}, ${hexBytes(leaf_hash)}, ${pg.escapeLiteral(digest)})`,
  );
  return `INSERT INTO records (seq, run_id, run_seq, type, canonical, leaf_hash, digest) VALUES ${rows.join(', ')}`;
}

/** A row write waiting for the next append's transaction: one SQL statement with literal values. */
export interface PendingWrite {
  statement: string;
  /** When set, the statement must change a row, else the write rejects with `conflict` and this message. */
  conflict?: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Settles deferred writes from their statements' results (rowCount 0 → conflict when asked). */
export function settle(writes: PendingWrite[], results: pg.QueryResult[]): void {
  writes.forEach((write, index) => {
    if (write.conflict !== undefined && results[index]?.rowCount === 0)
      write.reject(new CallgateError('conflict', write.conflict));
    else write.resolve();
  });
}

/** A SQL literal of a row value: text escaped, integers and booleans as such, null as NULL. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer column value: ${value}`);
    return String(value);
  }
  return pg.escapeLiteral(String(value));
}

/** The upsert of one `calls` row, values as literals (for a multi-statement query). */
export function upsertCallText(values: unknown[]): string {
  return `INSERT INTO calls (${CALL_COLUMNS}) VALUES (${values.map(literal).join(', ')})
    ON CONFLICT (run_id, call_id, attempt) DO UPDATE SET ${CALL_UPDATE}`;
}

/**
 * Stores a checkpoint; one of an already stored size with the same root is a no-op.
 * @throws CallgateError `ledger-invalid` when a checkpoint of that size with another root exists.
 */
export async function insertCheckpoint(client: Queryable, checkpoint: CheckpointRow): Promise<void> {
  const root = toBuffer(checkpoint.root);
  const inserted = await client.query(
    'INSERT INTO checkpoints (size, root, note, ts) VALUES ($1, $2, $3, $4) ON CONFLICT (size) DO NOTHING',
    [checkpoint.size, root, checkpoint.note, checkpoint.ts],
  );
  if (inserted.rowCount === 0) {
    const { rows } = await client.query<{ root: Buffer }>('SELECT root FROM checkpoints WHERE size = $1', [
      checkpoint.size,
    ]);
    if (!(rows[0] !== undefined && sameBytes(rows[0].root, root)))
      throw new CallgateError(
        'ledger-invalid',
        `a checkpoint of size ${checkpoint.size} with another root is stored: the log forked`,
        { size: checkpoint.size },
      );
  }
}
