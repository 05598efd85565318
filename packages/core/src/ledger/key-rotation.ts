// Log key rotation: the old key signs a statement naming the new key and the log size from which
// the new key signs checkpoints; the new key signs it too (it is really held). A verifier that
// pins the old key follows the statements to the current key. Format (a C2SP signed note):
//
//   callgate-key-rotation/v1
//   <origin>
//   <size>
//   <old verifier key>
//   <new verifier key>
//
//   — <origin> <old key's signature>
//   — <origin> <new key's signature>

import { CallgateError } from '@callgate/protocol';
import {
  encodeVerifierKey,
  type LogSigner,
  openNote,
  parseNote,
  parseVerifierKey,
  signNote,
  type VerifierKey,
} from './signed-note.js';

const HEADER = 'callgate-key-rotation/v1';

/** What a rotation statement says: from `size` on, checkpoints are signed by `newKey`. */
export interface KeyRotation {
  origin: string;
  size: number;
  /** The old and the new verifier keys (`origin+id+key`). */
  oldKey: string;
  newKey: string;
}

/**
 * The rotation statement from `oldSigner` to `newSigner` at log size `size`, signed by both.
 * @throws CallgateError `request-invalid` when the signers are of different origins or equal.
 */
export function signKeyRotation(oldSigner: LogSigner, newSigner: LogSigner, size: number): string {
  if (oldSigner.name !== newSigner.name)
    throw new CallgateError('request-invalid', 'a rotation keeps the origin');
  if (oldSigner.verifierKey === newSigner.verifierKey)
    throw new CallgateError('request-invalid', 'a rotation needs a new key');
  const text = `${HEADER}\n${oldSigner.name}\n${size}\n${oldSigner.verifierKey}\n${newSigner.verifierKey}\n`;
  const once = signNote(text, oldSigner);
  const second = signNote(text, newSigner);
  return `${once}${second.slice(second.lastIndexOf('\n\n') + 2)}`;
}

/** The old key a rotation statement names (not verified), or undefined when it names none. */
export function rotationOldKey(note: string): string | undefined {
  return namedKey(note, 3);
}

/** The key on line `line` of a rotation statement (3: the old key, 4: the new), not verified. */
function namedKey(note: string, line: 3 | 4): string | undefined {
  try {
    const lines = parseNote(note).text.split('\n');
    return lines[0] === HEADER ? lines[line] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens a rotation statement made by `current`, the key in force: its content, or why it does
 * not hold. It holds when it is signed by `current`, names `current` as its old key (a statement
 * signed by the key in force but naming another old key is refused: the chain of keys is read
 * from the statements, and each link must start where the last one ended), and is signed by the
 * new key it names, of the same origin (C2SP signed-note).
 *
 * @param current the key in force: a verifier key `name+id+key` or its parse.
 * @returns `{ ok: true, value }`, or `{ ok: false, reason }` naming what failed (`not signed by
 *   the key in force`, `names the old key X, but the key in force is Y`, ...). Never throws.
 */
export function openKeyRotation(
  note: string,
  current: VerifierKey | string,
): { ok: true; value: KeyRotation } | { ok: false; reason: string } {
  let inForce: string;
  try {
    const key = typeof current === 'string' ? parseVerifierKey(current) : current;
    inForce = encodeVerifierKey(key.name, key.publicKey);
  } catch (error) {
    return { ok: false, reason: `the key in force is not a verifier key: ${(error as Error).message}` };
  }
  const byOld = openNote(note, current);
  if (!byOld.ok) return { ok: false, reason: `not signed by the key in force: ${byOld.reason}` };
  const lines = byOld.value.slice(0, -1).split('\n');
  const [header, origin, sizeLine, oldKey, newKey] = lines;
  if (
    lines.length !== 5 ||
    !oldKey ||
    header !== HEADER ||
    !origin ||
    !newKey ||
    !/^(0|[1-9][0-9]{0,15})$/.test(sizeLine ?? '')
  )
    return { ok: false, reason: `not a ${HEADER} statement` };
  if (oldKey !== inForce)
    return {
      ok: false,
      reason: `the statement names the old key ${oldKey}, but the key in force is ${inForce}: a rotation starts from the key in force`,
    };
  let parsedNew: VerifierKey;
  try {
    parsedNew = parseVerifierKey(newKey);
  } catch (error) {
    return { ok: false, reason: `the new key: ${(error as Error).message}` };
  }
  if (parsedNew.name !== origin) return { ok: false, reason: 'the new key is not of the same origin' };
  const byNew = openNote(note, parsedNew);
  if (!byNew.ok) return { ok: false, reason: `not signed by the new key: ${byNew.reason}` };
  return { ok: true, value: { origin, size: Number(sizeLine), oldKey, newKey } };
}

/** The keys of a log over its sizes: `key` signs checkpoints of sizes `from` to `to` (inclusive). */
export interface KeyPeriod {
  key: string;
  from: number;
  to: number;
}

/**
 * Follows rotation statements from `start` (the pinned key): each must name as its old key, and
 * be signed by, the key in force, at a size no smaller than the previous one. A `start` that a
 * statement made (a later key of the chain) is followed from that statement on. Returns the
 * periods, or why a statement fails.
 */
export function followKeyRotations(
  start: string,
  statements: readonly string[],
): { periods: KeyPeriod[]; problem?: string } {
  const periods: KeyPeriod[] = [{ key: start, from: 0, to: Number.MAX_SAFE_INTEGER }];
  // A verifier may pin a later key of the chain (the one the log signs with now): the statements
  // up to the one that made that key are then not followed, and that one must carry its signature.
  let first = 0;
  if (statements.length > 0 && rotationOldKey(statements[0] as string) !== start) {
    const made = statements.findIndex((note) => namedKey(note, 4) === start);
    if (made >= 0) {
      const signed = openNote(statements[made] as string, start);
      if (!signed.ok)
        return {
          periods,
          problem: `key rotation ${made + 1}: not signed by the new key it names: ${signed.reason}`,
        };
      first = made + 1;
    }
  }
  for (const [index, note] of statements.entries()) {
    if (index < first) continue;
    const current = periods.at(-1) as KeyPeriod;
    try {
      parseNote(note);
    } catch (error) {
      return { periods, problem: `key rotation ${index + 1}: ${(error as Error).message}` };
    }
    const opened = openKeyRotation(note, current.key);
    if (!opened.ok) return { periods, problem: `key rotation ${index + 1}: ${opened.reason}` };
    if (opened.value.size < current.from)
      return { periods, problem: `key rotation ${index + 1}: size ${opened.value.size} goes back` };
    current.to = opened.value.size;
    periods.push({ key: opened.value.newKey, from: opened.value.size, to: Number.MAX_SAFE_INTEGER });
  }
  return { periods };
}
