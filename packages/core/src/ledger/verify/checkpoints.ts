// Checkpoint checks of the offline verifier: the pinned key, each checkpoint's C2SP signature and
// origin, their order, RFC 9162 consistency between consecutive checkpoints, and truncation.
import type { Bundle } from '@callgate/protocol';
import { decodeHash } from '../base64.js';
import { emptyRoot, verifyConsistency } from '../merkle.js';
import {
  type Checkpoint,
  openNote,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  type VerifierKey,
} from '../signed-note.js';
import type { Findings, VerifyOptions } from './report.js';

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);

/**
 * The key to check signatures with: the pinned `publicKey`, which the bundle must name too
 * (`public-key`), or else the bundle's own key, with a warning.
 */
export function checkKey(
  bundle: Bundle,
  options: VerifyOptions,
  findings: Findings,
): VerifierKey | undefined {
  const pinned = options.publicKey;
  if (pinned === undefined) {
    findings.warn(
      "no public key pinned: checkpoints were checked against the bundle's own key, which anyone re-signing a log can replace",
    );
  } else if (pinned !== bundle.public_key) {
    findings.fail('public-key', `the bundle names key ${bundle.public_key}, not the pinned key ${pinned}`);
  }
  const text = pinned ?? bundle.public_key;
  try {
    return parseVerifierKey(text);
  } catch (error) {
    findings.fail(
      'public-key',
      `${pinned === undefined ? "the bundle's" : 'the pinned'} key: ${(error as Error).message}`,
    );
    return undefined;
  }
}

/**
 * Opens every checkpoint: well-formed, signed by `key` (`checkpoint-signature`), of the bundle's
 * origin (`checkpoint-origin`), sizes never decreasing (`checkpoint-order`). Returns each body
 * (undefined when unreadable), whether or not its signature holds: failures are already reported.
 */
export function checkCheckpoints(
  bundle: Bundle,
  key: VerifierKey | undefined | ((size: number) => VerifierKey[]),
  findings: Findings,
): Array<Checkpoint | undefined> {
  const bodies: Array<Checkpoint | undefined> = [];
  let previous: Checkpoint | undefined;
  bundle.checkpoints.forEach((note, index) => {
    const label = `checkpoint ${index + 1} of ${bundle.checkpoints.length}`;
    let body: Checkpoint;
    try {
      body = parseCheckpoint(parseNote(note).text);
    } catch (error) {
      findings.fail('checkpoint-signature', `${label}: ${(error as Error).message}`);
      bodies.push(undefined);
      return;
    }
    if (key !== undefined) {
      // After a key rotation, the key in force at the checkpoint's size (see verify/rotations.ts).
      const keys = typeof key === 'function' ? key(body.size) : [key];
      const opened = keys.map((each) => openNote(note, each));
      if (!opened.some((result) => result.ok)) {
        const reason = opened.find((result) => !result.ok)?.reason ?? 'no log key in force at this size';
        findings.fail('checkpoint-signature', `${label} (size ${body.size}): ${reason}`);
      }
    }
    if (body.origin !== bundle.origin)
      findings.fail(
        'checkpoint-origin',
        `${label} is of log ${body.origin}, not the bundle's ${bundle.origin}`,
      );
    if (previous !== undefined && body.size < previous.size)
      findings.fail(
        'checkpoint-order',
        `${label} (size ${body.size}) follows a checkpoint of size ${previous.size}`,
      );
    bodies.push(body);
    previous = body;
  });
  return bodies;
}

/** `consistency`: `bundle.consistency[i]` proves checkpoint i+1 extends checkpoint i (RFC 9162 §2.1.4.2). */
export function checkConsistency(
  bundle: Bundle,
  bodies: ReadonlyArray<Checkpoint | undefined>,
  findings: Findings,
): void {
  const pairs = Math.max(0, bodies.length - 1);
  for (let i = 0; i < pairs; i++) {
    const from = bodies[i];
    const to = bodies[i + 1];
    if (from === undefined || to === undefined) continue;
    if (from.size === to.size || from.size === 0) {
      const fromRoot = from.size === 0 ? emptyRoot() : from.root;
      if (from.size === to.size && !sameBytes(fromRoot, to.root))
        findings.fail(
          'consistency',
          `two checkpoints of size ${from.size} with different roots: the log forked`,
        );
      if (from.size === 0 && !sameBytes(fromRoot, from.root))
        findings.fail('consistency', 'a checkpoint of size 0 must have the empty root');
      continue;
    }
    const proof = bundle.consistency[i];
    if (proof === undefined || proof.from_size !== from.size || proof.to_size !== to.size) {
      findings.fail('consistency', `no consistency proof from checkpoint size ${from.size} to ${to.size}`);
      continue;
    }
    const hashes = proof.hashes.map(decodeHash);
    const valid =
      hashes.every((hash) => hash !== undefined) &&
      verifyConsistency(from.size, to.size, hashes as Uint8Array[], from.root, to.root);
    if (!valid)
      findings.fail(
        'consistency',
        `the checkpoint of size ${to.size} does not extend the one of size ${from.size}`,
      );
  }
  if (bundle.consistency.length > pairs)
    findings.warn(
      `${bundle.consistency.length - pairs} consistency proof(s) beyond the checkpoints were ignored`,
    );
}

/**
 * `truncation`: the bundle reaches `expectSize` and every known checkpoint's size, and agrees with
 * the root of any known checkpoint of a size it also has (else `consistency`: a fork).
 */
export function checkTruncation(
  bodies: ReadonlyArray<Checkpoint | undefined>,
  key: VerifierKey | undefined,
  options: VerifyOptions,
  findings: Findings,
): void {
  const sizes = bodies.flatMap((body) => (body === undefined ? [] : [body.size]));
  const reached = sizes.length === 0 ? 0 : Math.max(...sizes);
  if (options.expectSize !== undefined && reached < options.expectSize)
    findings.fail(
      'truncation',
      `the bundle's checkpoints reach size ${reached}, but the log is known to have reached ${options.expectSize}`,
    );
  for (const [index, note] of (options.knownCheckpoints ?? []).entries()) {
    const label = `known checkpoint ${index + 1}`;
    if (key === undefined) {
      findings.fail('checkpoint-signature', `${label}: no key to check it with`);
      continue;
    }
    const opened = openNote(note, key);
    let known: Checkpoint;
    try {
      if (!opened.ok) throw new Error(opened.reason);
      known = parseCheckpoint(opened.value);
    } catch (error) {
      findings.fail('checkpoint-signature', `${label}: ${(error as Error).message}`);
      continue;
    }
    const same = bodies.find((body) => body !== undefined && body.size === known.size);
    if (same !== undefined && !sameBytes(same.root, known.root))
      findings.fail(
        'consistency',
        `${label} of size ${known.size} has another root than the bundle's: the log forked`,
      );
    if (reached < known.size)
      findings.fail(
        'truncation',
        `the bundle's checkpoints reach size ${reached}, but ${label} has size ${known.size}`,
      );
    else if (same === undefined)
      findings.warn(
        `${label} (size ${known.size}) is not in the bundle: its consistency with the bundle is unchecked`,
      );
  }
}
