// Keyed digests of caller-supplied values (record format version 2): the gate binds a call by the
// SHA-256 of its arguments' canonical JSON (`argumentsDigest`); a version 2 record carries that
// digest keyed, HMAC-SHA256 under the run's key, so that a bundle holds nothing a guess of a
// low-entropy argument could be hashed and compared against. Run keys are derived (HKDF, RFC 5869)
// from the log's arguments secret, kept in the store beside the log key. See docs/ledger.md,
// "Record format version 2".
import { CallgateError, isKeyedDigestField } from '@callgate/protocol';
import { hkdfSha256, hmacSha256Hex, hmacSha256HexKeyed, randomBytes, sha256Digest } from '../crypto.js';
import { fastCanonicalJson } from '../json/canonical.js';
import type { Store } from '../store/store.js';

/** Store meta key of the log's arguments secret (32 bytes, base64url): made with a new log. */
export const ARGUMENTS_SECRET_META_KEY = 'ledger:arguments-secret';

/** HKDF `info` prefix of a run key; the run id follows. */
const RUN_KEY_INFO = 'callgate-run-key/v2 ';
const SALT = new Uint8Array(0);

/**
 * The gate's digest of a call's arguments: `sha256:<hex>` of their RFC 8785 canonical JSON. It
 * binds grants, idempotency and approvals to the exact call, and is what the HTTP API returns to
 * the caller who sent the arguments. Every digest of arguments the gate computes goes through this
 * function; a version 2 record carries it keyed (see {@link keyedArgumentsDigest}).
 */
export function argumentsDigest(canonical: string): string {
  return sha256Digest(canonical);
}

/**
 * {@link argumentsDigest} of a value: its RFC 8785 canonical JSON first.
 * @throws CallgateError `tool-args-invalid` when the value has no canonical JSON form.
 */
export function argumentsDigestOf(value: unknown): string {
  return argumentsDigest(fastCanonicalJson(value));
}

/**
 * The run key of `runId`: HKDF-SHA256 (RFC 5869) of the log's 32-byte arguments secret, empty
 * salt, info `callgate-run-key/v2 <run id>` (UTF-8), 32 bytes.
 */
export function deriveRunKey(secret: Uint8Array, runId: string): Uint8Array {
  return hkdfSha256(secret, SALT, RUN_KEY_INFO + runId, 32);
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * A version 2 record's form of an arguments digest: `hmac-sha256:<hex>` of HMAC-SHA256 (RFC 2104)
 * under `runKey` of the 32 bytes of `digest` (a `sha256:<hex>` from {@link argumentsDigest}).
 * @throws CallgateError `ledger-invalid` when `digest` is not a `sha256:<64 hex>` digest.
 */
export function keyedArgumentsDigest(runKey: Uint8Array, digest: string): string {
  return keyedWith((data) => hmacSha256Hex(runKey, data), digest);
}

/** {@link keyedArgumentsDigest} with the run key's HMAC given as `mac` (see `hmacSha256HexKeyed`). */
function keyedWith(mac: (data: Uint8Array) => string, digest: string): string {
  if (!DIGEST.test(digest))
    throw new CallgateError('ledger-invalid', `an arguments digest must be sha256:<64 hex>, got ${digest}`);
  return `hmac-sha256:${mac(Buffer.from(digest.slice(7), 'hex'))}`;
}

/** The log's run keys, derived once per run (a bounded cache). */
export class RunKeys {
  readonly #secret: Uint8Array;
  readonly #cache = new Map<string, Uint8Array>();
  /** HMAC-SHA256 under each cached run key, its padded key blocks worked out once per run. */
  readonly #macs = new Map<string, (data: Uint8Array) => string>();

  constructor(secret: Uint8Array) {
    if (secret.length !== 32) throw new TypeError(`an arguments secret is 32 bytes, got ${secret.length}`);
    this.#secret = secret;
  }

  /** The run key of `runId` (see {@link deriveRunKey}). */
  of(runId: string): Uint8Array {
    let key = this.#cache.get(runId);
    if (key === undefined) {
      key = deriveRunKey(this.#secret, runId);
      if (this.#cache.size >= 4096) {
        const oldest = this.#cache.keys().next().value as string;
        this.#cache.delete(oldest);
        this.#macs.delete(oldest);
      }
      this.#cache.set(runId, key);
    }
    return key;
  }

  /** HMAC-SHA256 under the run key of `runId`, as 64 lowercase hex digits. */
  #mac(runId: string): (data: Uint8Array) => string {
    const key = this.of(runId);
    let mac = this.#macs.get(runId);
    if (mac === undefined) {
      mac = hmacSha256HexKeyed(key);
      this.#macs.set(runId, mac);
    }
    return mac;
  }

  /**
   * `body` with each caller-value digest (a top-level field ending in `arguments_digest` holding a
   * `sha256:` digest) keyed under the run key of `runId`; the body itself when it has none (never
   * changed).
   */
  keyBody<T extends object>(runId: string, body: T): T {
    let keyed: Record<string, unknown> | undefined;
    const source = body as Record<string, unknown>;
    for (const name in source) {
      if (!isKeyedDigestField(name)) continue;
      const value = source[name];
      // Null, or already keyed (a body copied from a version 2 record): left as it is.
      if (typeof value !== 'string' || value.startsWith('hmac-sha256:')) continue;
      keyed ??= { ...source };
      keyed[name] = keyedWith(this.#mac(runId), value);
    }
    return (keyed ?? body) as T;
  }
}

/** The record format a log writes, and its run keys when it writes version 2. */
export interface RecordFormat {
  version: 1 | 2;
  keys: RunKeys | undefined;
}

/**
 * The record format of the store's log: a new log (no records) makes its arguments secret and
 * writes version 2; a log with records and no secret is a version 1 log and stays one. `claim`
 * stores the secret unless one is stored already, and returns the stored one (PostgreSQL replicas
 * racing on a new log agree on one secret).
 * @throws CallgateError `ledger-invalid` when the log's records are version 2 but its secret is
 *   missing (the same continuity rule as the log key: a new secret would re-key the history), or
 *   the stored secret is malformed.
 */
export async function openRecordFormat(
  store: Store,
  size: number,
  claim: (key: string, value: string) => Promise<string>,
): Promise<RecordFormat> {
  let stored = await store.getMeta(ARGUMENTS_SECRET_META_KEY);
  if (stored === undefined && size === 0)
    stored = await claim(ARGUMENTS_SECRET_META_KEY, randomBytes(32).toString('base64url'));
  // Another engine may have made it between our two reads, before its first record.
  if (stored === undefined) stored = await store.getMeta(ARGUMENTS_SECRET_META_KEY);
  if (stored === undefined) {
    const [first] = await store.readRecords(0, 1);
    if (first !== undefined && first.v !== 1)
      throw new CallgateError(
        'ledger-invalid',
        `the log's records are version ${first.v} but its arguments secret (store meta ${ARGUMENTS_SECRET_META_KEY}) is missing: restore it; a new secret would re-key the log's history`,
      );
    return { version: 1, keys: undefined };
  }
  const secret = Buffer.from(stored, 'base64url');
  if (secret.length !== 32 || secret.toString('base64url') !== stored)
    throw new CallgateError(
      'ledger-invalid',
      `store meta ${ARGUMENTS_SECRET_META_KEY} is not the base64url of 32 bytes`,
    );
  return { version: 2, keys: new RunKeys(new Uint8Array(secret)) };
}
