// The signed export manifest of a `callgate-bundle/3`: a C2SP signed note, by the log key, over
// what an export claims beyond its records' own signatures: when it was made, the store's
// durability mode, the origin, how many records it holds, the checkpoint it proves them under and
// each exported run's head. Editing any of these, or cutting a run's tail (even inside its newest
// checkpoint), no longer verifies under the pinned key.
import { CallgateError } from '@callgate/protocol';
import { decodeHash, encodeBase64 } from './base64.js';
import { type LogSigner, signNote } from './signed-note.js';

/** The first line of a manifest note. */
export const MANIFEST_HEADER = 'callgate-export-manifest/v1';

/** A run's head as exported: its last record in the bundle. */
export interface ManifestRun {
  run_id: string;
  /** The `seq` of the run's last exported record. */
  seq: number;
  /** That record's RFC 9162 leaf hash (32 bytes). */
  leaf: Uint8Array;
  /** Whether that record is the run's `run-end`. */
  ended: boolean;
}

/** What a manifest signs. */
export interface Manifest {
  origin: string;
  exported_at: number;
  synchronous: string;
  records: number;
  /** Size and root of the checkpoint the bundle proves its records under. */
  tree_size: number;
  root: Uint8Array;
  runs: ManifestRun[];
}

/**
 * The manifest's note text, one field a line (run ids JSON-quoted, last on their line):
 *
 * ```
 * callgate-export-manifest/v1
 * origin <origin>
 * exported_at <epoch ms>
 * synchronous <NORMAL|FULL|MEMORY>
 * records <count>
 * tree <size> <base64 root>
 * run <seq> <base64 leaf hash> <ended|open> <JSON string of the run id>
 * ```
 */
export function formatManifest(manifest: Manifest): string {
  const lines = [
    MANIFEST_HEADER,
    `origin ${manifest.origin}`,
    `exported_at ${manifest.exported_at}`,
    `synchronous ${manifest.synchronous}`,
    `records ${manifest.records}`,
    `tree ${manifest.tree_size} ${encodeBase64(manifest.root)}`,
    ...manifest.runs.map(
      (run) =>
        `run ${run.seq} ${encodeBase64(run.leaf)} ${run.ended ? 'ended' : 'open'} ${JSON.stringify(run.run_id)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** Signs a manifest with the log key: a C2SP signed note of {@link formatManifest}. */
export function signManifest(manifest: Manifest, signer: LogSigner): string {
  return signNote(formatManifest(manifest), signer);
}

const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

function hash(text: string, what: string): Uint8Array {
  const bytes = decodeHash(text);
  if (bytes === undefined)
    throw new CallgateError('ledger-invalid', `manifest: ${what} is not a base64 SHA-256 hash`);
  return bytes;
}

function integer(text: string | undefined, what: string): number {
  if (text === undefined || !INTEGER.test(text) || !Number.isSafeInteger(Number(text)))
    throw new CallgateError('ledger-invalid', `manifest: ${what} is not a non-negative integer`);
  return Number(text);
}

/**
 * Parses a manifest note's (already verified) text.
 * @throws CallgateError `ledger-invalid` saying which line is malformed.
 */
export function parseManifest(text: string): Manifest {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines[0] !== MANIFEST_HEADER)
    throw new CallgateError('ledger-invalid', `manifest: the first line is not ${MANIFEST_HEADER}`);
  const field = (index: number, name: string): string => {
    const line = lines[index];
    if (line === undefined || !line.startsWith(`${name} `))
      throw new CallgateError('ledger-invalid', `manifest: line ${index + 1} is not "${name} …"`);
    return line.slice(name.length + 1);
  };
  const [treeSize, treeRoot, ...extra] = field(5, 'tree').split(' ');
  if (extra.length > 0 || treeRoot === undefined)
    throw new CallgateError('ledger-invalid', 'manifest: line 6 is not "tree <size> <root>"');
  const runs: ManifestRun[] = [];
  for (let index = 6; index < lines.length; index++) {
    const [seq, leaf, state, ...id] = field(index, 'run').split(' ');
    let runId: unknown;
    try {
      runId = JSON.parse(id.join(' '));
    } catch {
      runId = undefined;
    }
    if (typeof runId !== 'string' || leaf === undefined || (state !== 'ended' && state !== 'open'))
      throw new CallgateError(
        'ledger-invalid',
        `manifest: line ${index + 1} is not "run <seq> <leaf hash> <ended|open> <run id>"`,
      );
    runs.push({
      run_id: runId,
      seq: integer(seq, `line ${index + 1}'s seq`),
      leaf: hash(leaf, `line ${index + 1}'s leaf hash`),
      ended: state === 'ended',
    });
  }
  return {
    origin: field(1, 'origin'),
    exported_at: integer(field(2, 'exported_at'), 'exported_at'),
    synchronous: field(3, 'synchronous'),
    records: integer(field(4, 'records'), 'records'),
    tree_size: integer(treeSize, 'the tree size'),
    root: hash(treeRoot, 'the tree root'),
    runs,
  };
}
