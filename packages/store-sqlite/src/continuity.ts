// Before a data folder is used: is its database sound (`PRAGMA quick_check`), and is the log key
// beside it the key its log was signed with? A log is never silently continued under a new key,
// and a lost or emptied database is never silently a fresh log under the old key and origin.

import { statSync } from 'node:fs';
import { encodeVerifierKey, logSignerFromPrivateKey, openCheckpoint } from '@callgate/core/ledger';
import { CallgateError } from '@callgate/protocol';
import Database from 'better-sqlite3';

/** Store meta key of the public key (base64url, 32 bytes) the data folder's log is bound to. */
export const LOG_PUBLIC_KEY_META = 'ledger:public_key';
const ORIGIN_META = 'ledger:origin';

/** What a database file holds, read before the store opens it. */
export interface DatabaseState {
  path: string;
  /** The file's size in bytes; -1 when there is no file. */
  bytes: number;
  records: number;
  origin?: string;
  /** The public key the log is bound to (base64url), when the database records one. */
  boundKey?: string;
  /** The latest checkpoint's signed note, if any. */
  latestNote?: string;
}

function tableExists(database: Database.Database, name: string): boolean {
  return (
    database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined
  );
}

/**
 * Reads what the database at `path` holds (read-only), after `PRAGMA quick_check`.
 * @throws CallgateError `ledger-invalid` when the file is not a SQLite database or fails the
 *   check, naming the file and SQLite's first findings.
 */
export function inspectDatabase(path: string): DatabaseState {
  let bytes = -1;
  try {
    bytes = statSync(path).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (bytes <= 0) return { path, bytes, records: 0 };
  let database: Database.Database | undefined;
  try {
    database = new Database(path, { readonly: true, fileMustExist: true });
    const findings = database.pragma('quick_check', { simple: false }) as Array<{ quick_check: string }>;
    const problems = findings
      .flatMap((row) => row.quick_check.split('\n'))
      .filter((line) => line !== 'ok' && !line.startsWith('*** in database'));
    if (problems.length > 0) throw new Error(problems.slice(0, 3).join('; '));
    const state: DatabaseState = { path, bytes, records: 0 };
    if (tableExists(database, 'records')) {
      state.records = database
        .prepare('SELECT coalesce(max(seq) + 1, 0) FROM records')
        .pluck()
        .get() as number;
    }
    if (tableExists(database, 'meta')) {
      const meta = database.prepare('SELECT value FROM meta WHERE key = ?').pluck();
      const origin = meta.get(ORIGIN_META) as string | undefined;
      const boundKey = meta.get(LOG_PUBLIC_KEY_META) as string | undefined;
      if (origin !== undefined) state.origin = origin;
      if (boundKey !== undefined) state.boundKey = boundKey;
    }
    if (tableExists(database, 'checkpoints')) {
      const note = database.prepare('SELECT note FROM checkpoints ORDER BY size DESC LIMIT 1').pluck().get();
      if (typeof note === 'string') state.latestNote = note;
    }
    return state;
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    throw new CallgateError(
      'ledger-invalid',
      `database ${path} is damaged (PRAGMA quick_check: ${(error as Error).message}); callgate will not start on it. Restore it from a backup, or move it aside to start a new log`,
      { path },
      { cause: error },
    );
  } finally {
    database?.close();
  }
}

/** True when the database already holds a log (records, or the marks the first open leaves). */
export function holdsLog(state: DatabaseState): boolean {
  return state.records > 0 || state.origin !== undefined || state.boundKey !== undefined;
}

/** The key the log expects, as a person can match it: the C2SP verifier key when the origin is known. */
export function expectedKeyText(state: DatabaseState): string {
  if (state.boundKey && state.origin) {
    const publicKey = new Uint8Array(Buffer.from(state.boundKey, 'base64url'));
    return `log key ${encodeVerifierKey(state.origin, publicKey)}`;
  }
  if (state.boundKey) return `log key ed25519:${state.boundKey}`;
  const ids = state.latestNote ? noteKeyIds(state.latestNote) : [];
  return ids.length > 0 ? `the log key with id ${ids.join(' or ')}` : 'the log key it was started with';
}

/** The 8-hex key ids of a signed note's signature lines (`— <name> <base64(key id ‖ signature)>`). */
function noteKeyIds(note: string): string[] {
  return note
    .split('\n')
    .filter((line) => line.startsWith('\u2014 '))
    .map((line) =>
      Buffer.from(line.split(' ')[2] ?? '', 'base64')
        .subarray(0, 4)
        .toString('hex'),
    )
    .filter((id) => id.length === 8);
}

/** What {@link checkKeyContinuity} found: go on as before, or bind a new (or legacy) log to the key. */
export type Continuity = 'continue' | 'bind';

/**
 * Refuses a data folder whose log and key do not belong together. Call it before the key file is
 * made: `keyPresent` says whether `log-key.json` existed.
 *
 * - a log (records, or the marks of a first open) but no key file: refused, naming the expected
 *   key (a new key would re-sign old history under the same origin); `init` does not override it;
 * - a key file but no log (no database, a 0-byte one, or one with nothing in it), or a 0-byte
 *   database without a key: refused unless `init` (start a new log);
 * - a log bound to another public key, or (for a log from before the binding was recorded) whose
 *   latest checkpoint does not verify under this key: refused, naming the expected key.
 *
 * @throws CallgateError `ledger-invalid` with what was found and what to do.
 */
export function checkKeyContinuity(options: {
  dataDir: string;
  state: DatabaseState;
  keyPresent: boolean;
  init: boolean;
}): void {
  const { dataDir, state, keyPresent, init } = options;
  const log = holdsLog(state);
  const where = `data folder ${dataDir}`;
  if (!keyPresent && log) {
    throw new CallgateError(
      'ledger-invalid',
      `${where} holds a log (${state.records} records) but its log-key.json is missing: the log expects ${expectedKeyText(state)}. Restore that key file; a new key would re-sign the log's history`,
      { path: dataDir },
    );
  }
  if (init || log) return;
  if (keyPresent) {
    throw new CallgateError(
      'ledger-invalid',
      `${where} has a log key but ${state.bytes < 0 ? 'no callgate.db' : state.bytes === 0 ? 'a 0-byte callgate.db' : 'a callgate.db with no log'}: if the database was lost, restore it; to start a new log with this key, run \`callgate serve --init\``,
      { path: dataDir },
    );
  }
  if (state.bytes === 0) {
    throw new CallgateError(
      'ledger-invalid',
      `${where} has a 0-byte callgate.db (a damaged or truncated database?): restore it, or run \`callgate serve --init\` to start a new log`,
      { path: dataDir },
    );
  }
}

/**
 * Whether the log of `state` was signed with `privateKey`: its bound public key equals the key's,
 * or (no binding recorded yet) its latest checkpoint verifies under the key.
 * @returns `bind` when no binding is recorded yet (and nothing contradicts this key).
 * @throws CallgateError `ledger-invalid` naming the expected key and the one found.
 */
export function checkLogKey(
  dataDir: string,
  state: DatabaseState,
  privateKey: Uint8Array,
  publicKey: Uint8Array,
): Continuity {
  const found = Buffer.from(publicKey).toString('base64url');
  const foundText = state.origin ? encodeVerifierKey(state.origin, publicKey) : `ed25519:${found}`;
  const refuse = () =>
    new CallgateError(
      'ledger-invalid',
      `data folder ${dataDir}: log-key.json holds ${foundText}, but the log expects ${expectedKeyText(state)}. Restore the log's key file (to change keys, use \`callgate log-key rotate\` with the old key in place)`,
      { path: dataDir },
    );
  if (state.boundKey !== undefined) {
    if (state.boundKey !== found) throw refuse();
    return 'continue';
  }
  if (state.latestNote !== undefined && state.origin !== undefined) {
    const verifierKey = logSignerFromPrivateKey(state.origin, privateKey).verifierKey;
    if (!openCheckpoint(state.latestNote, verifierKey).ok) throw refuse();
  }
  return 'bind';
}
