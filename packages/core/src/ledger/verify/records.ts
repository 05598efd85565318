// Record checks of the offline verifier: each record's shape (format version 1) and canonical
// bytes, the order of the bundle, and each run's sequence and hash chain — in one pass over the
// records, which also hands each well-formed record to the checks that read records (calls,
// fidelity, policies, openings), keeping per record only what later checks need (its seq, and the
// leaf hashes in one buffer): a parsed record is garbage as soon as the pass has read it, so a
// 100,000-record bundle is not 100,000 objects more for the garbage collector to copy.
import type { LedgerRecord } from '@callgate/protocol';
import { HASH_SIZE } from '../merkle.js';
import { isLedgerRecord, recordSchemaOf } from '../record-validator.js';
import type { RecordSource } from './record-source.js';
import { type Findings, recordLabel, type VerifyCheck, type VerifyFailure } from './report.js';

/** The bundle's records after the per-record checks, by position in the bundle. */
export interface CheckedRecords {
  /** Where the records are read from (again, to name one in a failure). */
  source: RecordSource;
  /** Each record's seq when it matches its ledger record schema, else NaN. */
  seqs: Float64Array;
  /** RFC 9162 leaf hashes of the canonical bytes, record i at [32·i, 32·i + 32). */
  leaves: Uint8Array;
  /** 1 where the record has a canonical form (and so a leaf hash), 0 where it has none. */
  hashed: Uint8Array;
  /** Each run's last well-formed record, by position in the bundle, in order of the runs' first records. */
  lastOfRun: Map<string, number>;
}

/** Record `index` when it matches its ledger record schema, else undefined (read again from the source). */
export function wellFormedAt(checked: CheckedRecords, index: number): LedgerRecord | undefined {
  if (Number.isNaN(checked.seqs[index])) return undefined;
  return checked.source.read(index) as LedgerRecord;
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

/** Char codes of the lowercase hex digits. */
const HEX = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));

/** Whether `prev` is `sha256:` and the lowercase hex of the 32 bytes of `bytes` at `offset`. */
function namesDigest(prev: unknown, bytes: Uint8Array, offset: number): boolean {
  if (typeof prev !== 'string' || prev.length !== 71 || !prev.startsWith('sha256:')) return false;
  for (let i = 0; i < 32; i++) {
    const byte = bytes[offset + i] as number;
    if (prev.charCodeAt(7 + 2 * i) !== HEX[byte >> 4] || prev.charCodeAt(8 + 2 * i) !== HEX[byte & 15])
      return false;
  }
  return true;
}

/** `sha256:<hex>` of the 32 bytes of `bytes` at `offset`. */
const digestText = (bytes: Uint8Array, offset: number): string =>
  `sha256:${Buffer.from(bytes.buffer, bytes.byteOffset + offset, HASH_SIZE).toString('hex')}`;

/** A run's last record so far: its run_seq, where its chain digest is (if it has one), its position. */
interface RunHead {
  run_seq: number;
  /** The buffer holding its chain digest at `at`, or undefined when it has no canonical form. */
  digests: Uint8Array | undefined;
  at: number;
  index: number;
}

/** A failure found in the pass but reported after the per-record ones, with its record's label. */
type Deferred = [check: VerifyCheck, message: string, label: Pick<VerifyFailure, 'seq' | 'run_id' | 'type'>];

/**
 * Checks every record of `source`, reading each once, in order, reporting in this order: per
 * record `record-shape` and `canonical`; then records out of log order (`record-order`, strictly
 * increasing `seq`); then each run's `run-sequence` (`run_seq` 0, 1, 2, ... with no gap) and
 * `chain` (each `prev` the digest of the run's previous record, `null` for the first). Each
 * well-formed record is given to `visit` as it is read, in log order.
 * @throws what `source.read` throws (a file's line that is not canonical JSON).
 */
export function checkRecords(
  source: RecordSource,
  findings: Findings,
  visit?: (record: LedgerRecord) => void,
): CheckedRecords {
  const count = source.count;
  const seqs = new Float64Array(count);
  const leaves = Buffer.alloc(count * HASH_SIZE);
  const hashed = new Uint8Array(count);
  // Version 1 records' chain digests (SHA-256 of the bytes alone), made when the first one comes.
  let chain: Buffer | undefined;
  const later: Deferred[] = [];
  const chainFailures: Deferred[] = [];
  const heads = new Map<string, RunHead>();
  let previousSeq: number | undefined;

  for (let index = 0; index < count; index++) {
    // A line the no-object reader is certain of needs no parse and no shape check.
    const checkedFields = source.readChecked?.(index);
    const item = checkedFields ?? source.read(index);
    const record = checkedFields ?? checkShape(item, findings);
    seqs[index] = record === undefined ? Number.NaN : record.seq;
    const at = index * HASH_SIZE;
    const version2 = (item as { v?: unknown } | null)?.v === 2;
    let digests: Uint8Array | undefined;
    try {
      if (!version2 && chain === undefined) chain = Buffer.alloc(count * HASH_SIZE);
      source.hash(index, item, version2, leaves, chain);
      digests = version2 ? leaves : chain;
      hashed[index] = 1;
    } catch (error) {
      findings.fail('canonical', `no RFC 8785 canonical form: ${(error as Error).message}`, item);
    }
    if (record === undefined) continue;
    visit?.(record);

    if (previousSeq !== undefined && record.seq <= previousSeq)
      later.push([
        'record-order',
        `seq ${record.seq} follows seq ${previousSeq}: records must be in log order`,
        recordLabel(item),
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
        recordLabel(item),
      ]);
    }
    if ((record.run_seq === 0) !== (record.type === 'run-start')) {
      chainFailures.push([
        'run-sequence',
        record.type === 'run-start'
          ? `run ${record.run_id} has a run-start at run_seq ${record.run_seq}: a run starts once, first`
          : `run ${record.run_id} begins with a ${record.type} record, not run-start`,
        recordLabel(item),
      ]);
    }
    if (
      head === undefined
        ? record.prev !== null && record.run_seq === 0
        : head.digests === undefined ||
          !(checkedFields !== undefined && source.prevNamesDigest !== undefined
            ? source.prevNamesDigest(head.digests, head.at)
            : namesDigest(record.prev, head.digests, head.at))
    ) {
      const expectedPrev = head?.digests === undefined ? undefined : digestText(head.digests, head.at);
      chainFailures.push([
        'chain',
        head === undefined
          ? 'the first record of a run must have prev null'
          : `prev ${record.prev} is not the digest of the run's previous record (${expectedPrev})`,
        recordLabel(item),
      ]);
    }
    if (head === undefined) heads.set(record.run_id, { run_seq: record.run_seq, digests, at, index });
    else {
      head.run_seq = record.run_seq;
      head.digests = digests;
      head.at = at;
      head.index = index;
    }
  }
  for (const [check, message, label] of later.concat(chainFailures)) findings.fail(check, message, label);
  const lastOfRun = new Map<string, number>();
  for (const [runId, head] of heads) lastOfRun.set(runId, head.index);
  return { source, seqs, leaves, hashed, lastOfRun };
}

/** The runs of the bundle, each with its last record. */
export function lastRecordOfRuns(checked: CheckedRecords): Map<string, LedgerRecord> {
  const last = new Map<string, LedgerRecord>();
  for (const [runId, index] of checked.lastOfRun) last.set(runId, checked.source.read(index) as LedgerRecord);
  return last;
}
