// Record checks of the offline verifier: each record's shape (format version 1) and canonical
// bytes, the order of the bundle, and each run's sequence and hash chain.
import { type LedgerRecord, ledgerRecordSchema } from '@callgate/protocol';
import { hashRecord } from '../record.js';
import type { Findings } from './report.js';

/** A bundle record after the per-record checks. */
export interface CheckedRecord {
  raw: unknown;
  /** The record, when it matches `ledgerRecordSchema`. */
  record?: LedgerRecord;
  /** RFC 9162 leaf hash of its canonical bytes, when it has a canonical form. */
  leaf?: Uint8Array;
  /** `sha256:` digest of its canonical bytes, when it has a canonical form. */
  digest?: string;
}

function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || 'record'}: ${issue.message}`)
    .join('; ');
}

/** Shape and canonical form of each record: `record-shape`, `canonical`. */
export function checkRecordForms(records: readonly unknown[], findings: Findings): CheckedRecord[] {
  const checked: CheckedRecord[] = [];
  for (const raw of records) {
    const entry: CheckedRecord = { raw };
    const parsed = ledgerRecordSchema.safeParse(raw);
    if (parsed.success) entry.record = raw as LedgerRecord;
    else
      findings.fail(
        'record-shape',
        `not a version 1 ledger record: ${describeIssues(parsed.error.issues)}`,
        raw,
      );
    try {
      const hashes = hashRecord(raw);
      entry.leaf = hashes.leaf_hash;
      entry.digest = hashes.digest;
    } catch (error) {
      findings.fail('canonical', `no RFC 8785 canonical form: ${(error as Error).message}`, raw);
    }
    checked.push(entry);
  }
  return checked;
}

/** Records sorted by strictly increasing `seq`: `record-order`. */
export function checkOrder(checked: readonly CheckedRecord[], findings: Findings): void {
  let previous: number | undefined;
  for (const { record, raw } of checked) {
    if (record === undefined) continue;
    if (previous !== undefined && record.seq <= previous)
      findings.fail(
        'record-order',
        `seq ${record.seq} follows seq ${previous}: records must be in log order`,
        raw,
      );
    previous = record.seq;
  }
}

/**
 * Each run's records: `run_seq` 0, 1, 2, ... with no gap (`run-sequence`), and each `prev` the
 * digest of the run's previous record, `null` for the first (`chain`).
 */
export function checkChains(checked: readonly CheckedRecord[], findings: Findings): void {
  const heads = new Map<string, { run_seq: number; digest: string | undefined }>();
  for (const { record, raw, digest } of checked) {
    if (record === undefined) continue;
    const head = heads.get(record.run_id);
    const expected = head === undefined ? 0 : head.run_seq + 1;
    if (record.run_seq !== expected) {
      findings.fail(
        'run-sequence',
        head === undefined
          ? `run ${record.run_id} starts at run_seq ${record.run_seq}, not 0: its first records are missing`
          : `run_seq ${record.run_seq} follows run_seq ${head.run_seq}: expected ${expected}`,
        raw,
      );
    }
    const expectedPrev = head === undefined ? null : head.digest;
    if (head === undefined ? record.prev !== null && record.run_seq === 0 : record.prev !== expectedPrev) {
      findings.fail(
        'chain',
        head === undefined
          ? 'the first record of a run must have prev null'
          : `prev ${record.prev} is not the digest of the run's previous record (${expectedPrev})`,
        raw,
      );
    }
    heads.set(record.run_id, { run_seq: record.run_seq, digest });
  }
}

/** The runs of the bundle, each with its last record. */
export function lastRecordOfRuns(checked: readonly CheckedRecord[]): Map<string, LedgerRecord> {
  const last = new Map<string, LedgerRecord>();
  for (const { record } of checked) if (record !== undefined) last.set(record.run_id, record);
  return last;
}
