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
  try {
    const lines = parseNote(note).text.split('\n');
    return lines[0] === HEADER ? lines[3] : undefined;
  } catch {
    return undefined;
  }
}

/** Opens a rotation statement made by `current`: its content, or why it does not hold. */
export function openKeyRotation(
  note: string,
  current: VerifierKey | string,
): { ok: true; value: KeyRotation } | { ok: false; reason: string } {
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
 * Follows rotation statements from `start` (the pinned key): each must be signed by the key in
 * force, at a size no smaller than the previous one. Returns the periods, or why a statement fails.
 */
export function followKeyRotations(
  start: string,
  statements: readonly string[],
): { periods: KeyPeriod[]; problem?: string } {
  const periods: KeyPeriod[] = [{ key: start, from: 0, to: Number.MAX_SAFE_INTEGER }];
  for (const [index, note] of statements.entries()) {
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
