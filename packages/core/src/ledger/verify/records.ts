// Record checks of the offline verifier: each record's shape (format version 1) and canonical
// bytes, the order of the bundle, and each run's sequence and hash chain — in one pass over the
// records, keeping per record only what later checks need (the leaf hashes in one buffer), so
// that a 100,000-record bundle is not 100,000 small objects more for the garbage collector.
import type { LedgerRecord } from '@callgate/protocol';
import { sha256Digest, sha256Hex, sha256Into } from '../../crypto.js';
import { HASH_SIZE } from '../merkle.js';
import { hashRecordInto } from '../record.js';
import { isLedgerRecord, recordSchemaOf } from '../record-validator.js';
import type { Findings, VerifyCheck } from './report.js';

/** The bundle's records after the per-record checks, by position in the bundle. */
export interface CheckedRecords {
  /** The raw records, as given. */
  raw: readonly unknown[];
  /** Each record when it matches `ledgerRecordSchema`, else undefined. */
  records: Array<LedgerRecord | undefined>;
  /** RFC 9162 leaf hashes of the canonical bytes, record i at [32·i, 32·i + 32). */
  leaves: Uint8Array;
  /** 1 where the record has a canonical form (and so a leaf hash), 0 where it has none. */
  hashed: Uint8Array;
}

/** The leaf hash of record `index`, or undefined when it has no canonical form. */
export function leafOf(checked: CheckedRecords, index: number): Uint8Array | undefined {
  if (checked.hashed[index] !== 1) return undefined;
  return checked.leaves.subarray(index * HASH_SIZE, (index + 1) * HASH_SIZE);
}

function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || 'record'}: ${issue.message}`)
    .join('; ');
}

/** The record when it is a version 1 or 2 ledger record (by its `v`); else reports `record-shape`. */
function checkShape(raw: unknown, findings: Findings): LedgerRecord | undefined {
  // The compiled check is never looser than zod; when it is not certain, zod decides and explains.
  if (isLedgerRecord(raw)) return raw as LedgerRecord;
  const schema = recordSchemaOf(raw);
  const parsed = schema.safeParse(raw);
  if (parsed.success) return raw as LedgerRecord;
  const version = (raw as { v?: unknown } | null)?.v === 2 ? 2 : 1;
  findings.fail(
    'record-shape',
    `not a version ${version} ledger record: ${describeIssues(parsed.error.issues)}`,
    raw,
  );
  return undefined;
}

/**
 * Checks every record (`lines`, when given, are their canonical texts, hashed as they are),
 * reporting in this order: per record `record-shape` and `canonical`; then
 * records out of log order (`record-order`, strictly increasing `seq`); then each run's
 * `run-sequence` (`run_seq` 0, 1, 2, ... with no gap) and `chain` (each `prev` the digest of the
 * run's previous record, `null` for the first).
 */
/** A reused buffer of 0x00 ‖ a record line's bytes, grown as needed. */
let scratch = Buffer.allocUnsafeSlow(4096);

/**
 * Writes the leaf hash of a canonical line into `leaves` (a Buffer) at `offset`; returns its chain
 * digest. A version 2 record's is the leaf hash itself: one SHA-256 for both.
 */
function hashLineInto(line: string, version2: boolean, leaves: Buffer, offset: number): string {
  let length = line.length * 3 + 1;
  if (length > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.max(length, scratch.length * 2));
  scratch[0] = 0;
  length = scratch.write(line, 1, 'utf8') + 1;
  const input = scratch.subarray(0, length);
  if (!version2) {
    sha256Into(leaves, offset, input);
    return sha256Digest(input.subarray(1));
  }
  const hex = sha256Hex(input);
  leaves.write(hex, offset, 'hex');
  return `sha256:${hex}`;
}

export function checkRecords(
  raw: readonly unknown[],
  findings: Findings,
  lines?: readonly string[],
): CheckedRecords {
  const count = raw.length;
  const records: Array<LedgerRecord | undefined> = new Array(count);
  const leaves = Buffer.alloc(count * HASH_SIZE);
  const hashed = new Uint8Array(count);
  const later: Array<[check: VerifyCheck, message: string, record: unknown]> = [];
  const chainFailures: Array<[check: VerifyCheck, message: string, record: unknown]> = [];
  const heads = new Map<string, { run_seq: number; digest: string | undefined }>();
  let previousSeq: number | undefined;

  for (let index = 0; index < count; index++) {
    const item = raw[index];
    const record = checkShape(item, findings);
    records[index] = record;
    let digest: string | undefined;
    try {
      // A line read losslessly is the record's canonical bytes already (see bundle-text.ts).
      const line = lines?.[index];
      digest =
        line === undefined
          ? hashRecordInto(item, leaves, index * HASH_SIZE)
          : hashLineInto(line, (item as { v?: unknown }).v === 2, leaves, index * HASH_SIZE);
      hashed[index] = 1;
    } catch (error) {
      findings.fail('canonical', `no RFC 8785 canonical form: ${(error as Error).message}`, item);
    }
    if (record === undefined) continue;

    if (previousSeq !== undefined && record.seq <= previousSeq)
      later.push([
        'record-order',
        `seq ${record.seq} follows seq ${previousSeq}: records must be in log order`,
        item,
      ]);
    previousSeq = record.seq;

    const head = heads.get(record.run_id);
    const expected = head === undefined ? 0 : head.run_seq + 1;
    if (record.run_seq !== expected) {
      chainFailures.push([
        'run-sequence',
        head === undefined
          ? `run ${record.run_id} starts at run_seq ${record.run_seq}, not 0: its first records are missing`
          : `run_seq ${record.run_seq} follows run_seq ${head.run_seq}: expected ${expected}`,
        item,
      ]);
    }
    if ((record.run_seq === 0) !== (record.type === 'run-start')) {
      chainFailures.push([
        'run-sequence',
        record.type === 'run-start'
          ? `run ${record.run_id} has a run-start at run_seq ${record.run_seq}: a run starts once, first`
          : `run ${record.run_id} begins with a ${record.type} record, not run-start`,
        item,
      ]);
    }
    const expectedPrev = head === undefined ? null : head.digest;
    if (head === undefined ? record.prev !== null && record.run_seq === 0 : record.prev !== expectedPrev) {
      chainFailures.push([
        'chain',
        head === undefined
          ? 'the first record of a run must have prev null'
          : `prev ${record.prev} is not the digest of the run's previous record (${expectedPrev})`,
        item,
      ]);
    }
    if (head === undefined) heads.set(record.run_id, { run_seq: record.run_seq, digest });
    else {
      head.run_seq = record.run_seq;
      head.digest = digest;
    }
  }
  for (const [check, message, record] of later.concat(chainFailures)) findings.fail(check, message, record);
  return { raw, records, leaves, hashed };
}

/** The runs of the bundle, each with its last record. */
export function lastRecordOfRuns(checked: CheckedRecords): Map<string, LedgerRecord> {
  const last = new Map<string, LedgerRecord>();
  for (const record of checked.records) if (record !== undefined) last.set(record.run_id, record);
  return last;
}
