// Witness cosignatures in a bundle (c2sp.org/tlog-cosignature): with `witnesses` pinned, the
// bundle's newest checkpoint must carry valid cosignatures from a quorum of them. A witness
// cosigns only a checkpoint consistent with every one it cosigned before, so a history the log's
// own key re-signed, rolled back or forked after a witnessed checkpoint has no quorum.

import type { Bundle } from '@callgate/protocol';
import { parseCheckpoint, parseNote } from '../signed-note.js';
import {
  noteCosignatures,
  parseWitnessKey,
  repeatedWitness,
  type WitnessKey,
} from '../witness/cosignature.js';
import type { Findings, VerifyOptions } from './report.js';

/** The size of a checkpoint note, or undefined when it does not parse. */
function sizeOf(note: string): number | undefined {
  try {
    return parseCheckpoint(parseNote(note).text).size;
  } catch {
    return undefined;
  }
}

/**
 * Fails `witness` unless the newest checkpoint of `bundle` has cosignatures from at least
 * `options.quorum` (default: all) of `options.witnesses`. A no-op without `witnesses`.
 */
export function checkWitnesses(bundle: Bundle, options: VerifyOptions, findings: Findings): void {
  const pinned = options.witnesses ?? [];
  if (pinned.length === 0) return;
  const keys: WitnessKey[] = [];
  for (const text of pinned) {
    try {
      keys.push(parseWitnessKey(text));
    } catch (error) {
      findings.fail('witness', `witness key: ${(error as Error).message}`);
      return;
    }
  }
  const repeated = repeatedWitness(keys);
  if (repeated !== undefined) {
    findings.fail(
      'witness',
      `witness key ${pinned[repeated[1]]} is the same witness as ${pinned[repeated[0]]}: a quorum counts distinct witnesses`,
    );
    return;
  }
  const quorum = options.quorum ?? keys.length;
  if (!Number.isSafeInteger(quorum) || quorum < 1 || quorum > keys.length) {
    findings.fail(
      'witness',
      `quorum must be 1 to ${keys.length} (the number of witness keys), got ${quorum}`,
    );
    return;
  }
  let newest: { note: string; size: number } | undefined;
  for (const note of bundle.checkpoints) {
    const size = sizeOf(note);
    if (size !== undefined && (newest === undefined || size >= newest.size)) newest = { note, size };
  }
  if (newest === undefined) {
    findings.fail('witness', 'the bundle has no checkpoint a witness could have cosigned');
    return;
  }
  const cosigned = noteCosignatures(newest.note, keys);
  if (cosigned.length < quorum) {
    const by = cosigned.length > 0 ? ` (by ${cosigned.map((c) => c.witness).join(', ')})` : '';
    findings.fail(
      'witness',
      `the newest checkpoint (size ${newest.size}) has ${cosigned.length} valid cosignature(s)${by}, ${quorum} required of ${keys.map((key) => key.name).join(', ')}: it was not witnessed, or the log was re-signed, rolled back or forked after what the witnesses saw`,
    );
  }
}
