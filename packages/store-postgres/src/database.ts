// Connecting to PostgreSQL: the pool's settings, BIGINT as numbers, errors in callgate's words.
import type { Logger } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import pg from 'pg';

/** Options of `PostgresStore.open`. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq URL; PG* variables fill what it omits). */
  url: string;
  /**
   * The PostgreSQL schema holding callgate's tables (created when missing). Default `callgate`.
   * Several logs may share one database in different schemas.
   */
  schema?: string;
  /** Most connections of the pool (the lease and notification connections come on top). Default 10. */
  maxConnections?: number;
  /** How long a connection attempt may take before it fails, in ms. Default 5000. */
  connectTimeoutMs?: number;
  logger?: Logger;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema name, checked (it is spliced into `search_path`). @throws CallgateError `request-invalid`. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema))
    throw new CallgateError(
      'request-invalid',
      `PostgreSQL schema ${JSON.stringify(schema)} must be lower-case letters, digits and _ (at most 63, not starting with a digit)`,
    );
  return schema;
}

const INT8_OID = 20;
/** BIGINT columns hold epoch ms and sizes, all safe integers: read them as numbers. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * The `pg` client settings of a store: search_path set to its schema at connection time, after
 * the URL's own `options` (libpq's `?options=-c name=value …`, e.g. `-c synchronous_commit=off`),
 * which are kept: pg would otherwise let the URL's replace the schema's.
 */
export function clientConfig(options: PostgresStoreOptions, schema: string): pg.ClientConfig {
  let connectionString = options.url;
  let extra = '';
  try {
    const parsed = new URL(options.url);
    extra = parsed.searchParams.get('options') ?? '';
    parsed.searchParams.delete('options');
    connectionString = parsed.toString();
  } catch {
    // Not a URL (a libpq keyword string): pg parses it as is.
  }
  return {
    connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    options: `${extra ? `${extra} ` : ''}-c search_path=${schema}`,
    types,
    application_name: 'callgate',
    keepAlive: true,
  };
}

/**
 * The durability PostgreSQL gives a commit, in the Store's words: `FULL` when a commit is
 * acknowledged after its WAL is flushed (`synchronous_commit` on, local, remote_write or
 * remote_apply), `NORMAL` when it is acknowledged before (`off`: a replica's crash loses nothing,
 * PostgreSQL's own crash may lose the last commits, like SQLite's NORMAL in WAL mode).
 */
export function durabilityOf(synchronousCommit: string | undefined): 'NORMAL' | 'FULL' {
  return synchronousCommit === 'off' ? 'NORMAL' : 'FULL';
}

/** Where `url` points, without its password (for messages). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ''}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'the PostgreSQL URL given';
  }
}

/**
 * Codes of a database that cannot be reached: Node's socket errors, and PostgreSQL's
 * admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections and
 * object_not_in_prerequisite_state (a database not accepting connections); SQLSTATE class 08
 * (connection exceptions) is matched as a class.
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/**
 * The error of a failed connection or query, as callgate reports it: unreachable database →
 * `gate-unavailable` (the gate fails closed and says why); a unique violation → `conflict`.
 */
export function storeError(error: unknown, where: string, conflict?: string): unknown {
  const code = (error as { code?: string } | undefined)?.code;
  if (code === '23505' && conflict !== undefined)
    return new CallgateError('conflict', conflict, {}, { cause: error });
  const message = error instanceof Error ? error.message : '';
  if (
    (code !== undefined && UNREACHABLE_CODES.has(code)) ||
    code?.startsWith('08') ||
    /timeout|Connection terminated|not queryable|Client was closed|not currently accepting connections/i.test(
      message,
    )
  ) {
    return new CallgateError(
      'gate-unavailable',
      `PostgreSQL at ${where} is unreachable: ${(error as Error).message || code}`,
      {},
      { cause: error },
    );
  }
  return error;
}
