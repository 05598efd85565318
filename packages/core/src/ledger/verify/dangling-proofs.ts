// A consistency proof names two checkpoint sizes; an exporter writes one only between checkpoints
// it includes. A proof whose size no checkpoint of the bundle has means a checkpoint was removed.

import type { Bundle } from '@callgate/protocol';
import type { Checkpoint } from '../signed-note.js';
import type { Findings } from './report.js';

/** Fails `checkpoint-missing` for each consistency proof from or to a size no checkpoint has. */
export function checkDanglingProofs(
  bundle: Bundle,
  bodies: ReadonlyArray<Checkpoint | undefined>,
  findings: Findings,
): void {
  if (bodies.some((body) => body === undefined)) return;
  const sizes = new Set(bodies.map((body) => body?.size));
  for (const proof of bundle.consistency) {
    for (const size of [proof.from_size, proof.to_size]) {
      if (sizes.has(size)) continue;
      findings.fail(
        'checkpoint-missing',
        `a consistency proof names checkpoint size ${size}, which the bundle lacks: a checkpoint was removed`,
      );
      return;
    }
  }
}
