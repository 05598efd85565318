// Sealing a ledger record: its canonical bytes, its Merkle leaf hash and its chain digest.
import type { LedgerRecord } from '@callgate/protocol';
import { sha256, sha256Digest } from '../crypto.js';
import type { StoredRecord } from '../store/store.js';
import { fastCanonicalJson } from './fast-canonical.js';

/** The canonical form and both hashes of a record's canonical bytes. */
export interface RecordHashes {
  /** RFC 8785 canonical JSON. */
  canonical: string;
  /** RFC 9162 leaf hash SHA-256(0x00 ‖ canonical), 32 bytes. */
  leaf_hash: Uint8Array;
  /**
   * What the run's next record names as `prev`: for version 1, `sha256:<hex>` of canonical; for
   * version 2, `sha256:<hex>` of the leaf hash itself (one hash per record).
   */
  digest: string;
}

/** True for a version 2 record (its chain links on the leaf hash). */
function chainsOnLeaf(record: unknown): boolean {
  return (record as { v?: unknown } | null)?.v === 2;
}

/** `sha256:<hex>` of a 32-byte leaf hash: a version 2 record's chain digest. */
export function leafDigest(leaf: Uint8Array): string {
  return `sha256:${Buffer.from(leaf.buffer, leaf.byteOffset, 32).toString('hex')}`;
}

/**
 * Hashes a record-like value: RFC 8785 canonical JSON, the RFC 9162 leaf hash of those bytes and
 * its chain digest (see {@link RecordHashes}).
 * @throws CallgateError `tool-args-invalid` when the value has no canonical JSON form.
 */
export function hashRecord(record: unknown): RecordHashes {
  const canonical = fastCanonicalJson(record);
  const prefixed = leafInput(canonical);
  const leaf_hash = sha256(prefixed);
  return {
    canonical,
    leaf_hash,
    digest: chainsOnLeaf(record) ? leafDigest(leaf_hash) : sha256Digest(prefixed.subarray(1)),
  };
}

/** One buffer for both hashes of a record: 0x00 ‖ its canonical bytes (UTF-8). */
function leafInput(canonical: string): Buffer {
  const prefixed = Buffer.allocUnsafe(Buffer.byteLength(canonical, 'utf8') + 1);
  prefixed[0] = 0x00;
  prefixed.write(canonical, 1, 'utf8');
  return prefixed;
}

/** The fields the ledger adds to a body, in RFC 8785 key order. */
const BASE_KEYS = ['prev', 'run_id', 'run_seq', 'seq', 'ts', 'v'] as const;
type BaseValues = readonly [
  prev: string | null,
  run_id: string,
  run_seq: number,
  seq: number,
  ts: number,
  v: 1 | 2,
];

/** The sorted keys of a record made from bodies with the keys `bodyKeys`; source -1 = the body. */
interface Layout {
  bodyKeys: string[];
  keys: string[];
  sources: number[];
}
/** Layouts by body type; a type has one layout per combination of optional keys seen. */
const layouts = new Map<unknown, Layout[]>();
const MAX_LAYOUTS_PER_TYPE = 64;

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function layoutOf(type: unknown, bodyKeys: string[]): Layout {
  let known = layouts.get(type);
  if (known === undefined) {
    known = [];
    if (typeof type === 'string' && layouts.size < 64) layouts.set(type, known);
  }
  for (const layout of known) if (sameKeys(layout.bodyKeys, bodyKeys)) return layout;
  const keys = [...new Set([...bodyKeys, ...BASE_KEYS])].sort();
  const layout = {
    bodyKeys,
    keys,
    sources: keys.map((key) => (BASE_KEYS as readonly string[]).indexOf(key)),
  };
  if (known.length < MAX_LAYOUTS_PER_TYPE) known.push(layout);
  return layout;
}

/**
 * A record from a body and the ledger's fields (`prev`, `run_id`, `run_seq`, `seq`, `ts`, `v`),
 * keys in RFC 8785 order (so its canonical form needs no sort, and stored copies read back
 * sorted). The ledger's fields win over same-named body keys; undefined body values are left out.
 */
export function buildRecord(body: object, base: BaseValues): LedgerRecord {
  const source = body as Record<string, unknown>;
  const { keys, sources } = layoutOf(source.type, Object.keys(source));
  const record: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const from = sources[i] as number;
    const value = from < 0 ? source[key] : base[from];
    if (value !== undefined) record[key] = value;
  }
  return record as LedgerRecord;
}

/**
 * Seals a record for a store: `{ record, canonical, leaf_hash, digest }` (see {@link StoredRecord}).
 * The record is kept by reference; do not change it afterwards.
 * @throws CallgateError `tool-args-invalid` when the record has no canonical JSON form (NaN, a
 *   lone surrogate, ...).
 */
export function sealRecord(record: LedgerRecord): StoredRecord {
  const { canonical, leaf_hash, digest } = hashRecord(record);
  return { record, canonical, leaf_hash, digest };
}

/** Every commitment a record holds (contents, arguments, results), in field order. */
export function recordCommitments(record: LedgerRecord): string[] {
  switch (record.type) {
    case 'model-message':
      return [
        ...(record.content_commitment === null ? [] : [record.content_commitment]),
        ...record.tool_calls.map((call) => call.arguments_commitment),
      ];
    case 'call-decision':
      return record.arguments_commitment === null ? [] : [record.arguments_commitment];
    case 'call-end':
      return record.result_commitment === null ? [] : [record.result_commitment];
    case 'mcp-exchange':
      return [
        record.params_commitment,
        ...(record.result_commitment === null ? [] : [record.result_commitment]),
      ];
    default:
      return [];
  }
}
