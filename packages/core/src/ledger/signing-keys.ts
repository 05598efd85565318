// Which log keys signed a bundle's checkpoints, and which key a verifier pins for it. A log whose
// key was rotated (`callgate log-key rotate`) carries its rotation statements in every bundle;
// the verifier follows them from the pinned key, so the key to pin is the first key of the chain
// (the key the log had before its first rotation), not the log's current key.
import type { AnyBundle } from '@callgate/protocol';
import { followKeyRotations, rotationOldKey } from './key-rotation.js';
import { openCheckpoint } from './signed-note.js';

/** The keys of a bundle, as verifier key strings (`name+id+key`, C2SP note keys). */
export interface BundleKeys {
  /** The key to give `callgate verify --public-key`: the first key of the bundle's rotation chain, or its `public_key`. */
  pin: string;
  /** The keys that signed the bundle's checkpoints, in chain order, each once. */
  signers: string[];
  /** The log's current key when exported (the bundle's `public_key`). */
  current: string;
}

/**
 * The verifier key to pin for a log whose current key is `current` (`name+id+key`) after the
 * rotation statements `statements` (callgate-key-rotation/v1 signed notes, oldest first): the old
 * key the first names, or `current` when there are none (or the first names no key).
 */
export function keyToPin(current: string, statements: readonly string[]): string {
  return (statements.length > 0 ? rotationOldKey(statements[0] as string) : undefined) ?? current;
}

/**
 * The keys of `bundle` (see {@link BundleKeys}). Reads the rotation statements without trusting
 * them (verification is `verifyBundle`'s): keys named by a statement that does not hold are
 * skipped, and a checkpoint no key opens adds nothing to `signers`.
 */
export function bundleKeys(bundle: AnyBundle): BundleKeys {
  const statements = bundle.key_rotations ?? [];
  const first = statements.length > 0 ? rotationOldKey(statements[0] as string) : undefined;
  const pin = keyToPin(bundle.public_key, statements);
  const chain =
    first === undefined
      ? [bundle.public_key]
      : followKeyRotations(first, statements).periods.map((period) => period.key);
  if (!chain.includes(bundle.public_key)) chain.push(bundle.public_key);
  const signers = chain.filter((key) =>
    bundle.checkpoints.some((note) => {
      try {
        return openCheckpoint(note, key).ok;
      } catch {
        return false;
      }
    }),
  );
  return { pin, signers, current: bundle.public_key };
}
