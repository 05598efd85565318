// Exporting one run as a bundle: its records, one batch inclusion proof of them all under the
// latest checkpoint and a manifest signed by the log key (`callgate-bundle/3`; or, on request, an
// RFC 9162 inclusion proof of each, `callgate-bundle/1`), the checkpoints and consistency proof
// between them, the policy documents its decisions name and, on request, the openings of its
// commitments and the run's key.
import {
  type AnyBundle,
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V3,
  type Bundle,
  type BundleV3,
  CallgateError,
  type ConsistencyProof,
  type InclusionProof,
  type LedgerRecord,
  type Opening,
} from '@callgate/protocol';
import { canonicalJson, digestOf } from '../json/canonical.js';
import type { CheckpointRow, Store } from '../store/store.js';
import type { RunKeys } from './arguments-key.js';
import { encodeBase64 } from './base64.js';
import { batchProofRanges } from './batch-proof.js';
import { LEAF_CHUNK } from './frontier-store.js';
import { signManifest } from './manifest.js';
import { inclusionRanges } from './merkle.js';
import { consistencyProofFrom, encodedRanges, rootFrom, SubtreeCollector } from './proofs.js';
import { hashRecord, recordCommitments } from './record.js';
import { type LogSigner, openCheckpoint } from './signed-note.js';

/** The store meta key under which a policy document is kept: `policy:<digest>`. */
export function policyMetaKey(digest: string): string {
  return `policy:${digest}`;
}

/**
 * Keeps a policy document for exports: stores its RFC 8785 canonical JSON under meta key
 * `policy:<digest>`, where digest is `digestOf(policy)` (`sha256:<hex>` of that JSON). The engine
 * calls this when a policy is first used; bundles then carry the document beside the decisions
 * that name it. Returns the digest.
 */
export async function putPolicyDocument(store: Store, policy: unknown): Promise<string> {
  const digest = digestOf(policy);
  await store.setMeta(policyMetaKey(digest), canonicalJson(policy));
  return digest;
}

/** What exporting a run needs from its ledger. */
export interface RunExportContext {
  store: Store;
  signer: LogSigner;
  origin: string;
  exportedAt: number;
  /** The checkpoint the bundle proves its records under: the latest, covering the whole log. */
  latest: CheckpointRow;
  /** The log's run keys (record format version 2), for `revealRunKeys` and openings. */
  keys?: RunKeys | undefined;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);

function isOurs(row: CheckpointRow, context: RunExportContext): boolean {
  const opened = openCheckpoint(row.note, context.signer.verifierKey);
  return (
    opened.ok &&
    opened.value.origin === context.origin &&
    opened.value.size === row.size &&
    sameBytes(opened.value.root, row.root)
  );
}

/** Options of {@link exportRunBundle}. */
export interface RunExportOptions {
  /** Include the vault openings of the run's commitments. */
  openings?: boolean;
  /**
   * One RFC 9162 inclusion proof per record (`callgate-bundle/1`) instead of one batch proof of
   * them all and a signed manifest (`callgate-bundle/3`, the default: half the size or less).
   */
  proofs?: boolean;
  /**
   * Reveal the run's key (`run_keys`) so that an auditor holding its arguments can check the keyed
   * `arguments_digest`s (record format version 2). Implied by `openings`. `callgate-bundle/3` only.
   */
  revealRunKeys?: boolean;
}

/**
 * Builds the bundle of run `runId` (records with seq below the latest checkpoint's size):
 * `callgate-bundle/3`, or `callgate-bundle/1` with `proofs`. Reads every leaf hash up to that
 * size once (O(n) hashing, O(proofs + log n) memory).
 * @throws CallgateError `not-found` when the run has no records; `ledger-invalid` when the store's
 *   leaf hashes contradict a checkpoint or a record.
 */
export async function exportRunBundle(
  context: RunExportContext,
  runId: string,
  options: RunExportOptions = {},
): Promise<AnyBundle> {
  const { store } = context;
  const size = context.latest.size;
  // The stored note of the latest checkpoint may carry witness cosignatures added since it was signed.
  const stored = (await store.listCheckpoints(size, size))[0];
  const latest = stored && sameBytes(stored.root, context.latest.root) ? stored : context.latest;
  const records = (await store.readRunRecords(runId)).filter((record) => record.seq < size);
  const last = records.at(-1);
  if (last === undefined) throw new CallgateError('not-found', `run ${runId} has no records in the log`);

  // The earliest checkpoint that covers the whole run, then the latest.
  const covering = await store.listCheckpoints(last.seq + 1, size);
  const earliest = covering.find((row) => row.size < size && isOurs(row, context));
  const checkpoints = earliest === undefined ? [latest] : [earliest, latest];

  const collector = new SubtreeCollector();
  const batch = options.proofs
    ? []
    : batchProofRanges(
        records.map((record) => record.seq),
        size,
      );
  for (const record of records) {
    collector.needRange([record.seq, record.seq + 1]);
    if (options.proofs) collector.needInclusion(record.seq, size);
  }
  for (const range of batch) collector.needRange(range);
  for (const row of checkpoints) collector.needRoot(row.size);
  if (earliest !== undefined) collector.needConsistency(earliest.size, size);
  for (let from = 0; from < size; from += LEAF_CHUNK) {
    const to = Math.min(size, from + LEAF_CHUNK);
    const leaves = await store.readLeafHashes(from, to);
    if (leaves.length !== to - from)
      throw new CallgateError(
        'ledger-invalid',
        `the store returned ${leaves.length} leaf hashes for [${from}, ${to})`,
      );
    for (const leaf of leaves) collector.append(leaf);
  }

  const source = collector.source;
  for (const row of checkpoints) {
    if (!sameBytes(rootFrom(source, row.size), row.root))
      throw new CallgateError(
        'ledger-invalid',
        `the stored leaves do not give the root of checkpoint ${row.size}`,
      );
  }
  for (const record of records) {
    const stored = source(0, record.seq);
    if (stored === undefined || !sameBytes(hashRecord(record).leaf_hash, stored))
      throw new CallgateError('ledger-invalid', `record ${record.seq} does not match its stored leaf hash`);
  }

  const encoded = encodedRanges(source);
  const proofs: InclusionProof[] = options.proofs
    ? records.map((record) => ({
        leaf_index: record.seq,
        tree_size: size,
        hashes: inclusionRanges(record.seq, size).map(([start, end]) => encoded(start, end)),
      }))
    : [];
  const consistency: ConsistencyProof[] =
    earliest === undefined
      ? []
      : [
          {
            from_size: earliest.size,
            to_size: size,
            hashes: consistencyProofFrom(source, earliest.size, size).map(encodeBase64),
          },
        ];

  const rotations = await store.getMeta(KEY_ROTATIONS_META_KEY);
  const common = {
    origin: context.origin,
    public_key: context.signer.verifierKey,
    exported_at: context.exportedAt,
    synchronous: store.synchronous,
    records,
    checkpoints: checkpoints.map((row) => row.note),
    consistency,
    policies: await policiesOf(store, records),
    ...(options.openings ? { openings: await openingsOf(store, records) } : {}),
    ...(rotations !== undefined ? { key_rotations: JSON.parse(rotations) as string[] } : {}),
  };
  if (options.proofs) {
    // Fields in callgate-bundle/1's own order.
    const { openings, key_rotations, ...rest } = common;
    const bundle: Bundle = {
      format: BUNDLE_FORMAT,
      origin: rest.origin,
      public_key: rest.public_key,
      exported_at: rest.exported_at,
      synchronous: rest.synchronous,
      records,
      proofs,
      checkpoints: rest.checkpoints,
      consistency,
      policies: rest.policies,
      ...(openings ? { openings } : {}),
      ...(key_rotations ? { key_rotations } : {}),
    };
    return bundle;
  }
  const lastLeaf = source(0, last.seq) as Uint8Array;
  const manifest = signManifest(
    {
      origin: context.origin,
      exported_at: context.exportedAt,
      synchronous: store.synchronous,
      records: records.length,
      tree_size: size,
      root: latest.root,
      runs: [{ run_id: runId, seq: last.seq, leaf: lastLeaf, ended: last.type === 'run-end' }],
    },
    context.signer,
  );
  const reveal = (options.openings || options.revealRunKeys) && context.keys !== undefined;
  const { openings, key_rotations, ...rest } = common;
  const bundle: BundleV3 = {
    format: BUNDLE_FORMAT_V3,
    origin: rest.origin,
    public_key: rest.public_key,
    exported_at: rest.exported_at,
    synchronous: rest.synchronous,
    manifest,
    checkpoints: rest.checkpoints,
    consistency,
    inclusion: { tree_size: size, hashes: batch.map(([start, end]) => encoded(start, end)) },
    policies: rest.policies,
    ...(openings ? { openings } : {}),
    ...(reveal && context.keys
      ? { run_keys: [{ run_id: runId, key: Buffer.from(context.keys.of(runId)).toString('base64url') }] }
      : {}),
    ...(key_rotations ? { key_rotations } : {}),
    // Last: a bundle file holds its records one a line at its end (see bundle-text.ts).
    records,
  };
  return bundle;
}

/** Store meta key of the log's key rotation statements (a JSON array of signed notes, oldest first). */
export const KEY_ROTATIONS_META_KEY = 'ledger:key_rotations';

async function policiesOf(store: Store, records: LedgerRecord[]): Promise<Bundle['policies']> {
  const digests = new Set<string>();
  for (const record of records) {
    if (record.type === 'call-decision' || record.type === 'policy-snapshot')
      digests.add(record.policy_digest);
  }
  const policies: Bundle['policies'] = [];
  for (const digest of digests) {
    const text = await store.getMeta(policyMetaKey(digest));
    // A missing document is left out: the verifier reports the decisions that name it.
    if (text !== undefined) policies.push({ digest, policy: JSON.parse(text) as unknown });
  }
  return policies;
}

async function openingsOf(store: Store, records: LedgerRecord[]): Promise<Opening[]> {
  const commitments = [...new Set(records.flatMap(recordCommitments))];
  return commitments.length === 0 ? [] : store.getOpenings(commitments);
}
