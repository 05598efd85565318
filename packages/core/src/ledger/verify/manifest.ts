// The signed export manifest check of `callgate-bundle/3`: the manifest is signed by the log key,
// and what it signs is what the bundle says and holds: export time, durability mode, origin,
// record count, the checkpoint the records are proven under, and each run's head (its last
// record's seq and leaf hash, and whether it is the run's end).
import type { BundleV3 } from '@callgate/protocol';
import { encodeBase64 } from '../base64.js';
import { parseManifest } from '../manifest.js';
import { type Checkpoint, openNote, type VerifierKey } from '../signed-note.js';
import { type CheckedRecords, leafOf, wellFormedAt } from './records.js';
import type { Findings } from './report.js';

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);

/** `manifest`: see the file comment. Reports each difference; nothing when `key` is unknown (already failed). */
export function checkManifest(
  bundle: BundleV3,
  key: VerifierKey | undefined,
  checked: CheckedRecords,
  last: Checkpoint | undefined,
  findings: Findings,
): void {
  if (key === undefined) return;
  const opened = openNote(bundle.manifest, key);
  if (!opened.ok) {
    findings.fail('manifest', `the export manifest is not signed by the log key: ${opened.reason}`);
    return;
  }
  let manifest: ReturnType<typeof parseManifest>;
  try {
    manifest = parseManifest(opened.value);
  } catch (error) {
    findings.fail('manifest', (error as Error).message);
    return;
  }
  const claims: Array<[string, unknown, unknown]> = [
    ['origin', bundle.origin, manifest.origin],
    ['exported_at', bundle.exported_at, manifest.exported_at],
    ['synchronous', bundle.synchronous, manifest.synchronous],
    ['record count', bundle.records.length, manifest.records],
    ['inclusion tree size', bundle.inclusion.tree_size, manifest.tree_size],
  ];
  for (const [what, said, signed] of claims) {
    if (said !== signed)
      findings.fail(
        'manifest',
        `the bundle's ${what} is ${JSON.stringify(said)}, the signed manifest's ${JSON.stringify(signed)}`,
      );
  }
  if (last !== undefined && (last.size !== manifest.tree_size || !sameBytes(last.root, manifest.root)))
    findings.fail(
      'manifest',
      `the last checkpoint (size ${last.size}) is not the one the signed manifest names (size ${manifest.tree_size})`,
    );

  // Each run's last record in the bundle, by position.
  const heads = new Map(checked.lastOfRun);
  for (const run of manifest.runs) {
    const index = heads.get(run.run_id);
    heads.delete(run.run_id);
    const record = index === undefined ? undefined : wellFormedAt(checked, index);
    if (index === undefined || record === undefined) {
      findings.fail(
        'manifest',
        `run ${run.run_id} is in the signed manifest but has no record in the bundle`,
      );
      continue;
    }
    const leaf = leafOf(checked, index);
    if (record.seq !== run.seq) {
      findings.fail(
        'manifest',
        `run ${run.run_id} ends at seq ${record.seq} in the bundle but at seq ${run.seq} in the signed manifest${record.seq < run.seq ? ': records were cut from its tail' : ''}`,
        record,
      );
    } else if (leaf === undefined || !sameBytes(leaf, run.leaf)) {
      findings.fail(
        'manifest',
        `the last record of run ${run.run_id} is not the one the signed manifest names (leaf hash ${encodeBase64(run.leaf)})`,
        record,
      );
    } else if ((record.type === 'run-end') !== run.ended) {
      findings.fail('manifest', `run ${run.run_id}'s end differs from the signed manifest`, record);
    }
  }
  for (const runId of heads.keys())
    findings.fail('manifest', `run ${runId} has records in the bundle but is not in the signed manifest`);
}
