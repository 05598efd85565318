// Test helper: tampering with an honest exported run and checking that the verifier catches it.

import type { VerifyCheck, VerifyOptions, VerifyReport } from '@callgate/core/ledger';
import type { Bundle } from '@callgate/protocol';
import { type BundleFixture, buildBundleFixture } from './fixture.js';

/** The honest bundle every tamper test starts from, and the options pinning its key. */
export interface TamperBase {
  honest: BundleFixture;
  pinned: VerifyOptions;
  /** A deep copy of the honest bundle, changed by `change`. */
  tampered(change: (bundle: Bundle) => void): Bundle;
}

export async function tamperBase(): Promise<TamperBase> {
  const honest = await buildBundleFixture();
  return {
    honest,
    pinned: { publicKey: honest.signer.verifierKey },
    tampered(change) {
      const copy = structuredClone(honest.bundle);
      change(copy);
      return copy;
    },
  };
}

/** The same text with its last character changed. */
export const changeCharacter = (text: string): string =>
  text.length === 0 ? 'a' : `${text.slice(0, -1)}${text.endsWith('a') ? 'b' : 'a'}`;

/** A valid-looking digest no record holds. */
export const ZERO_DIGEST = `sha256:${'0'.repeat(64)}`;

/**
 * Asserts the report failed, naming `check` among its failures.
 * @throws Error listing the failures found when it did not.
 */
export function expectCaught(report: VerifyReport, check: VerifyCheck): void {
  const checks = report.failures.map((failure) => failure.check);
  if (report.ok || !checks.includes(check))
    throw new Error(`expected a ${check} failure, got: ${JSON.stringify(report.failures)}`);
}
