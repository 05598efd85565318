// Log key rotations in a bundle: the pinned key (or, unpinned, the first statement's old key)
// leads through each callgate-key-rotation/v1 statement to the bundle's current key, and each
// checkpoint must be signed by the key in force at its size.

import type { Bundle } from '@callgate/protocol';
import { followKeyRotations, rotationOldKey } from '../key-rotation.js';
import { parseVerifierKey, type VerifierKey } from '../signed-note.js';
import type { Findings, VerifyOptions } from './report.js';

/**
 * For a bundle with `key_rotations`: the options to check the bundle's current key with (the
 * pinned key replaced by the current one once the chain from it holds), and the keys in force at
 * each size. Fails `public-key` when a statement does not hold or the chain ends elsewhere.
 * Without rotations, returns `options` as they are.
 */
export function resolveRotations(
  bundle: Bundle,
  options: VerifyOptions,
  findings: Findings,
): { options: VerifyOptions; keyFor?: (size: number) => VerifierKey[] } {
  const statements = bundle.key_rotations ?? [];
  if (statements.length === 0) return { options };
  const start = options.publicKey ?? rotationOldKey(statements[0] as string);
  if (start === undefined) {
    findings.fail('public-key', 'key rotation 1 names no old key');
    return { options };
  }
  const { periods, problem } = followKeyRotations(start, statements);
  if (problem !== undefined) {
    findings.fail('public-key', problem);
    return { options };
  }
  const current = periods.at(-1)?.key;
  if (current !== bundle.public_key) {
    findings.fail(
      'public-key',
      `the key rotations end at ${current}, not at the bundle's key ${bundle.public_key}`,
    );
    return { options };
  }
  const parsed = periods.map((period) => ({ ...period, verifier: parseVerifierKey(period.key) }));
  return {
    options: options.publicKey === undefined ? options : { ...options, publicKey: bundle.public_key },
    keyFor: (size) =>
      parsed.filter((period) => period.from <= size && size <= period.to).map((period) => period.verifier),
  };
}
