// The log's Ed25519 signing key, kept beside the database in `<dataDir>/log-key.json`.

import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ed25519PublicKey, generateEd25519KeyPair, randomBytes } from '@callgate/core/crypto';
import { CallgateError } from '@callgate/protocol';

/** The key file's name inside the data folder. */
const LOG_KEY_FILE = 'log-key.json';

/** The log's signing key: a raw 32-byte Ed25519 seed and its 32-byte public key. */
export interface LogKey {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  /** True when this call made the key (first start), false when it was loaded. */
  created: boolean;
}

/** The key file (version 1): `{"v":1,"algorithm":"ed25519","private_key":"<base64url seed>"}`. */
interface LogKeyFile {
  v: 1;
  algorithm: 'ed25519';
  private_key: string;
}

const EXPECTED_SHAPE = '{"v":1,"algorithm":"ed25519","private_key":"<base64url of the 32-byte seed>"}';
function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function malformed(path: string, why: string): CallgateError {
  return new CallgateError(
    'internal',
    `log key file ${path} is malformed: ${why}; expected ${EXPECTED_SHAPE}`,
    {
      path,
    },
  );
}

/** Parses a key file's text into the 32-byte seed. @throws CallgateError `internal` when malformed. */
function parseLogKeyFile(path: string, text: string): Uint8Array {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw malformed(path, `not JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw malformed(path, 'not a JSON object');
  }
  const file = parsed as Partial<Record<keyof LogKeyFile, unknown>>;
  if (file.v !== 1) throw malformed(path, `unknown version ${JSON.stringify(file.v)}`);
  if (file.algorithm !== 'ed25519')
    throw malformed(path, `unknown algorithm ${JSON.stringify(file.algorithm)}`);
  // 32 bytes are 43 base64url characters without padding.
  if (typeof file.private_key !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(file.private_key)) {
    throw malformed(path, 'private_key is not the base64url (unpadded) of 32 bytes');
  }
  const seed = Buffer.from(file.private_key, 'base64url');
  if (seed.length !== 32 || seed.toString('base64url') !== file.private_key) {
    throw malformed(path, 'private_key is not the base64url (unpadded) of 32 bytes');
  }
  return new Uint8Array(seed);
}

/**
 * Reads the key file at `path`, or `undefined` when there is none.
 * @throws CallgateError `internal` when it is not a regular file, group or others may read or
 *   write it (POSIX mode bits 0o077; not checked on Windows), or it is malformed.
 */
function readLogKeyFile(path: string): Uint8Array | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) {
      throw new CallgateError('internal', `log key file ${path} is not a regular file`, { path });
    }
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
      throw new CallgateError(
        'internal',
        `log key file ${path} has mode ${mode}: group or others may read it. Refusing to use it; if the key was not exposed, run \`chmod 600 ${path}\``,
        { path },
      );
    }
    return parseLogKeyFile(path, readFileSync(descriptor, 'utf8'));
  } finally {
    closeSync(descriptor);
  }
}

/** Flushes a folder's entries (a new file name) to disk; a no-op where folders cannot be fsync'd. */
function fsyncFolder(folder: string): void {
  try {
    const descriptor = openSync(folder, 'r');
    try {
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
  } catch {
    // Windows cannot open a folder for fsync; the rename itself is still atomic there.
  }
}

/**
 * The log's Ed25519 signing key, made on first start and kept in `<dataDir>/log-key.json`
 * (`{"v":1,"algorithm":"ed25519","private_key":"<base64url seed>"}`, mode 0600).
 *
 * A new key is written to a temporary file created with mode 0600, fsync'd, then moved into
 * place without replacing an existing file (a hard link, or a rename where links are not
 * supported), so a reader never sees a partial file and two processes starting together end up
 * with the same key. `dataDir` must exist.
 *
 * @returns the 32-byte seed, the 32-byte public key, and whether this call created the key.
 * @throws CallgateError `internal` when the existing key file is malformed, is not a regular
 *   file, or group or others may access it (mode & 0o077, POSIX only); Node's file system errors
 *   (e.g. ENOENT when `dataDir` is missing, EACCES) as thrown.
 */
export function loadOrCreateLogKey(dataDir: string): LogKey {
  const path = join(dataDir, LOG_KEY_FILE);
  const existing = readLogKeyFile(path);
  if (existing) return { privateKey: existing, publicKey: ed25519PublicKey(existing), created: false };

  const keyPair = generateEd25519KeyPair();
  const file: LogKeyFile = {
    v: 1,
    algorithm: 'ed25519',
    private_key: Buffer.from(keyPair.privateKey).toString('base64url'),
  };
  const temporary = join(dataDir, `.${LOG_KEY_FILE}.${randomBytes(8).toString('hex')}.tmp`);
  const descriptor = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(descriptor, `${JSON.stringify(file)}\n`);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  try {
    try {
      linkSync(temporary, path);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') {
        // Another process made the key first: use theirs.
        const theirs = readLogKeyFile(path);
        if (theirs) return { privateKey: theirs, publicKey: ed25519PublicKey(theirs), created: false };
      }
      renameSync(temporary, path);
    }
  } finally {
    rmSync(temporary, { force: true });
  }
  fsyncFolder(dataDir);
  return { privateKey: keyPair.privateKey, publicKey: keyPair.publicKey, created: true };
}
