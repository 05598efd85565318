// The offline verifier of `callgate-bundle/1`, `/2` and `/3`: pure, no store, no network. It runs
// every check and reports each failure with the record and the check it is about. The versions
// differ in how the records' inclusion is proven: one proof per record (1), or one batch proof of
// them all (2, 3); and 3 adds a signed manifest and may reveal run keys.
import {
  type AnyBundle,
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V2,
  BUNDLE_FORMAT_V3,
  type Bundle,
  type BundleV2,
  type BundleV3,
  bundleSchema,
  bundleV2Schema,
  bundleV3Schema,
  CallgateError,
} from '@callgate/protocol';
import { rootFromBatchProof } from '../batch-proof.js';
import { type BundleText, parseBundleText } from '../bundle-text.js';
import { isBundleShape, isBundleV2Shape, isBundleV3Shape } from '../record-validator.js';
import type { Checkpoint } from '../signed-note.js';
import { CallAttempts } from './attempts.js';
import { checkBundleFields } from './bundle-fields.js';
import { CallChecks } from './calls.js';
import { checkCheckpoints, checkConsistency, checkKey, checkTruncation } from './checkpoints.js';
import { checkOpeningsHeld, HeldCommitments, PolicyChecks } from './contents.js';
import { checkDanglingProofs } from './dangling-proofs.js';
import { FidelityChecks, unsignedFields } from './fidelity.js';
import { type InclusionItem, verifyInclusions } from './inclusion.js';
import { type BundleFile, readBundleFile } from './line-records.js';
import { checkManifest } from './manifest.js';
import { ParsedRecords, type RecordSource } from './record-source.js';
import { type CheckedRecords, checkRecords, lastRecordOfRuns, leafOf } from './records.js';
import { Findings, type VerifyOptions, type VerifyReport } from './report.js';
import { resolveRotations } from './rotations.js';
import { checkRunKeys } from './run-keys.js';
import { checkWitnesses } from './witnesses.js';

/**
 * Whether `count` records have a checkpoint to be proven under: false when there are none, or
 * when `last` is undefined (then `checkpoint-missing` fails, as no inclusion can be checked).
 */
function provable(count: number, last: Checkpoint | undefined, findings: Findings): last is Checkpoint {
  if (count === 0) return false;
  if (last === undefined) {
    findings.fail(
      'checkpoint-missing',
      'no readable checkpoint: the inclusion of the records cannot be checked',
    );
    return false;
  }
  return true;
}

/** `inclusion`: one proof per record, for its seq, under the last checkpoint, and it holds. */
function checkInclusion(
  bundle: Bundle,
  checked: CheckedRecords,
  last: Checkpoint | undefined,
  findings: Findings,
): void {
  const count = checked.seqs.length;
  if (!provable(count, last, findings)) return;
  const items: InclusionItem[] = [];
  const owners: number[] = [];
  const raw = (index: number): unknown => checked.source.read(index);
  for (let index = 0; index < count; index++) {
    const proof = bundle.proofs[index];
    const seq = checked.seqs[index] as number;
    const leaf = leafOf(checked, index);
    if (proof === undefined) {
      findings.fail('inclusion', 'no inclusion proof for this record', raw(index));
    } else if (Number.isNaN(seq) || leaf === undefined) {
      findings.fail('inclusion', 'the record cannot be proven: it is malformed', raw(index));
    } else if (proof.leaf_index !== seq || proof.tree_size !== last.size) {
      findings.fail(
        'inclusion',
        `the proof is for leaf ${proof.leaf_index} of a tree of ${proof.tree_size}, not leaf ${seq} of the last checkpoint's ${last.size}`,
        raw(index),
      );
    } else {
      items.push({ leaf, index: seq, hashes: proof.hashes });
      owners.push(index);
    }
  }
  const holds = verifyInclusions(items, last.size, last.root);
  for (let i = 0; i < holds.length; i++) {
    if (!holds[i])
      findings.fail(
        'inclusion',
        `not included in the log under the checkpoint of size ${last.size}`,
        raw(owners[i] as number),
      );
  }
  if (bundle.proofs.length > count)
    findings.warn(`${bundle.proofs.length - count} inclusion proof(s) without a record were ignored`);
}

/**
 * `inclusion` of `callgate-bundle/2`: the records' leaves and the batch proof give the root of the
 * last checkpoint (RFC 9162 MTH, recomputed). A mismatch fails every record, as none is then
 * proven.
 */
function checkBatchInclusion(
  bundle: BundleV2 | BundleV3,
  checked: CheckedRecords,
  last: Checkpoint | undefined,
  findings: Findings,
): void {
  const count = checked.seqs.length;
  if (!provable(count, last, findings)) return;
  if (bundle.inclusion.tree_size !== last.size) {
    findings.fail(
      'inclusion',
      `the batch proof is for a tree of ${bundle.inclusion.tree_size}, not the last checkpoint's ${last.size}`,
    );
    return;
  }
  const indices: number[] = [];
  const slots: number[] = [];
  for (let index = 0; index < count; index++) {
    const seq = checked.seqs[index] as number;
    if (Number.isNaN(seq) || checked.hashed[index] !== 1) {
      findings.fail('inclusion', 'the record cannot be proven: it is malformed', checked.source.read(index));
      continue;
    }
    indices.push(seq);
    slots.push(index);
  }
  const root = rootFromBatchProof(indices, checked.leaves, last.size, bundle.inclusion.hashes, slots);
  if (root !== undefined && Buffer.from(root).equals(last.root)) return;
  for (const slot of slots)
    findings.fail(
      'inclusion',
      `not included in the log under the checkpoint of size ${last.size}: the batch proof does not give its root`,
      checked.source.read(slot),
    );
}

/** The bundle formats this verifier reads, and the schema of each. */
const SCHEMAS = {
  [BUNDLE_FORMAT]: { schema: bundleSchema, fast: isBundleShape },
  [BUNDLE_FORMAT_V2]: { schema: bundleV2Schema, fast: isBundleV2Shape },
  [BUNDLE_FORMAT_V3]: { schema: bundleV3Schema, fast: isBundleV3Shape },
} as const;

function refused(findings: Findings): VerifyReport {
  return { ok: false, failures: findings.failures, warnings: findings.warnings, records: 0, checkpoints: 0 };
}

/**
 * Verifies a bundle (`callgate-bundle/1`, `/2` or `/3`) offline: its shape (nested entries
 * without fields their schema does not define, none given twice); each record's shape and RFC 8785
 * canonical form; log order; each run's sequence and hash chain; the RFC 9162 inclusion of every
 * record under the last checkpoint; each checkpoint's C2SP signature against the pinned key and
 * RFC 9162 consistency between consecutive checkpoints; truncation (`expectSize`,
 * `knownCheckpoints`); approvals and executions of calls; policy digests; openings; for `/3` the
 * signed manifest (export time, durability, origin, record count, each run's head) and, with
 * revealed run keys, each opened call's keyed arguments digest (a decision of a run the bundle
 * opens whose opening or key is missing: a warning, with `strict` a failure); and with `strict`, a
 * `run-end` closing every run. Pure: no store, no clock, no network.
 *
 * @param input a parsed bundle (e.g. `JSON.parse` of an export; {@link verifyBundleText} reads a
 *   file's text losslessly).
 * @returns the report; `ok` is true when no check failed. Never throws.
 */
export function verifyBundle(input: unknown, options: VerifyOptions = {}): VerifyReport {
  return verifyParsed(input, options, undefined);
}

/**
 * {@link verifyBundle} of a bundle file's text, read losslessly (as `parseBundleText` reads it): a
 * record line with a duplicate key or in any but its canonical form fails `canonical`, naming its
 * line, and nothing else is reported. In the one-record-a-line layout the record lines are read one
 * at a time, in the same pass as the record checks, and each line's bytes are hashed as read (no
 * parsed record is held after its line). Never throws.
 *
 * @param text the file's text, or its bytes (UTF-8) as read from disk: the faster input, as the
 *   records' lines are then decoded apart from the first line, and hashed from the bytes when they
 *   are ASCII.
 */
export function verifyBundleText(text: string | Uint8Array, options: VerifyOptions = {}): VerifyReport {
  let file: BundleFile;
  try {
    file = readBundleFile(text);
  } catch (error) {
    return unreadable(error);
  }
  try {
    const report = verifyParsed(file.bundle, options, file.lines);
    // A bundle refused before its records were read is refused for a bad line first, if it has one.
    file.lines?.readRest();
    return report;
  } catch (error) {
    // A record line that is not its record's canonical JSON refuses the file (see LineRecords).
    if (error instanceof CallgateError && error.kind === 'ledger-invalid') return unreadable(error);
    throw error;
  }
}

/**
 * {@link verifyBundleText} as it was made first, kept as the reference the record pass over a
 * file's lines is tested against: the whole file read by `parseBundleText` (every record parsed
 * and held), then verified as a parsed bundle whose lines are hashed as read.
 */
export function verifyBundleTextReference(
  text: string | Uint8Array,
  options: VerifyOptions = {},
): VerifyReport {
  let read: BundleText;
  try {
    read = parseBundleText(text);
  } catch (error) {
    return unreadable(error);
  }
  const records = (read.bundle as { records?: unknown }).records;
  const source =
    read.lines !== undefined && Array.isArray(records) ? new ParsedRecords(records, read.lines) : undefined;
  return verifyParsed(read.bundle, options, source);
}

/** The report on a file that could not be read: a bad record line fails `canonical`, else `bundle-shape`. */
function unreadable(error: unknown): VerifyReport {
  const findings = new Findings();
  const message = (error as Error).message;
  // A line, or a whole bundle in another layout, not in the text its values are written as.
  const canonical =
    /^line \d+ of the bundle|^the bundle is not the text|^the bundle is not read as written/.test(message);
  findings.fail(canonical ? 'canonical' : 'bundle-shape', message);
  return refused(findings);
}

function verifyParsed(
  input: unknown,
  options: VerifyOptions,
  source: RecordSource | undefined,
): VerifyReport {
  const findings = new Findings();
  const format = (input as { format?: unknown } | null)?.format;
  const known =
    typeof format === 'string' && Object.hasOwn(SCHEMAS, format)
      ? SCHEMAS[format as keyof typeof SCHEMAS]
      : undefined;
  if (known === undefined) {
    findings.fail(
      'bundle-shape',
      typeof input !== 'object' || input === null || Array.isArray(input)
        ? 'not a callgate bundle: not a JSON object'
        : format === undefined
          ? 'not a callgate bundle: it has no "format" field'
          : `unknown bundle format ${JSON.stringify(format)}: this verifier reads ${Object.keys(SCHEMAS).join(', ')}`,
    );
    return refused(findings);
  }
  // The compiled check reads the bundle in place, and zod (which copies it) only explains a refusal.
  const parsed = known.fast(input)
    ? { success: true as const, data: input as AnyBundle }
    : known.schema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.map(String).join('.') || 'bundle'}: ${issue.message}`);
    findings.fail('bundle-shape', `not a ${format}: ${issues.join('; ')}`);
    return refused(findings);
  }
  const bundle = parsed.data as AnyBundle;
  const fields = new Set(Object.keys(known.schema.shape));
  const unknown = Object.keys(input as object).filter((key) => !fields.has(key));
  if (unknown.length > 0) {
    findings.warn(`the bundle has fields ${bundle.format} does not define, ignored: ${unknown.join(', ')}`);
  }
  checkBundleFields(known.schema, bundle, findings);

  // The checks below read only the fields both versions share (never `proofs`).
  const shared = bundle as Bundle;
  const rotations = resolveRotations(shared, options, findings);
  const key = checkKey(shared, rotations.options, findings);
  const bodies = checkCheckpoints(shared, key && (rotations.keyFor ?? key), findings);
  checkConsistency(shared, bodies, findings);
  checkTruncation(bodies, key, options, findings);
  checkWitnesses(shared, options, findings);
  checkDanglingProofs(shared, bodies, findings);
  if (bundle.records.length > 0 && bundle.checkpoints.length === 0)
    findings.fail('checkpoint-missing', 'the bundle has records but no checkpoint');
  // An export always holds its run's records (at least its run-start): none left means removed.
  if (bundle.records.length === 0)
    findings.fail('bundle-shape', 'the bundle has no records: an exported run has at least its run-start');

  // The checks that read records run in the record pass, each collecting its findings apart,
  // reported below in their order.
  // One state per decided attempt, made by the call checks and shared with the fidelity checks.
  const attempts = new CallAttempts();
  const calls = new CallChecks(new Findings(), attempts);
  const fidelity = new FidelityChecks(options.strict === true, new Findings(), attempts);
  const policies = new PolicyChecks(shared, new Findings());
  const held = new HeldCommitments(shared);
  const checked = checkRecords(source ?? new ParsedRecords(bundle.records), findings, (record) => {
    calls.record(record);
    fidelity.record(record);
    policies.record(record);
    held.record(record);
  });
  if (bundle.format === BUNDLE_FORMAT) checkInclusion(bundle, checked, bodies.at(-1), findings);
  else checkBatchInclusion(bundle, checked, bodies.at(-1), findings);
  if (bundle.format === BUNDLE_FORMAT_V3) {
    checkManifest(bundle, key, checked, bodies.at(-1), findings);
    checkRunKeys(bundle, checked, options.strict === true, findings);
  }

  findings.append(calls.findings);
  fidelity.finish();
  findings.append(fidelity.findings);
  findings.append(policies.findings);
  checkOpeningsHeld(shared, held.held, findings);
  for (const last of lastRecordOfRuns(checked).values()) {
    if (last.type === 'run-end') continue;
    const message = `run ${last.run_id} does not end with a run-end record: it may be cut short or still running`;
    if (options.strict) findings.fail('run-end', message, last);
    else findings.warn(`${message} (--strict makes this a failure)`);
  }
  if (bundle.synchronous === 'MEMORY')
    findings.warn('the bundle was exported from an in-memory store: its records were never on disk');

  return {
    ok: findings.failures.length === 0,
    failures: findings.failures,
    warnings: findings.warnings,
    records: bundle.records.length,
    checkpoints: bundle.checkpoints.length,
    // A callgate-bundle/3's manifest signs every field that carries meaning.
    unsigned: bundle.format === BUNDLE_FORMAT_V3 ? [] : unsignedFields(bundle),
  };
}
