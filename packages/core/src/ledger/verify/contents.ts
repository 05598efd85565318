// Content checks of the offline verifier: policy documents against their digests, and openings
// against the commitments the records hold. The part that reads the records runs as they are read
// ({@link PolicyChecks.record}, {@link HeldCommitments.record}), keeping digests and commitments,
// not records.
import type { Bundle, LedgerRecord } from '@callgate/protocol';
import { digestOf, opens } from '../../json/canonical.js';
import { recordCommitments } from '../record.js';
import type { Findings } from './report.js';

/**
 * `policy-digest`: each policy document hashes (RFC 8785, sha256) to its digest (checked when
 * made). `policy-missing`: every policy digest a decision or policy snapshot names has its
 * document (checked per record given to {@link PolicyChecks.record}, once per digest).
 */
export class PolicyChecks {
  readonly #present = new Set<string>();
  readonly #reported = new Set<string>();

  constructor(
    bundle: Bundle,
    readonly findings: Findings,
  ) {
    for (const { digest, policy } of bundle.policies) {
      let actual: string;
      try {
        actual = digestOf(policy);
      } catch (error) {
        findings.fail(
          'policy-digest',
          `policy ${digest} has no canonical JSON form: ${(error as Error).message}`,
        );
        continue;
      }
      if (actual !== digest)
        findings.fail('policy-digest', `the policy document listed as ${digest} hashes to ${actual}`);
      else this.#present.add(digest);
    }
  }

  record(record: LedgerRecord): void {
    if (record.type !== 'call-decision' && record.type !== 'policy-snapshot') return;
    if (this.#present.has(record.policy_digest) || this.#reported.has(record.policy_digest)) return;
    this.#reported.add(record.policy_digest);
    this.findings.fail(
      'policy-missing',
      `policy ${record.policy_digest} is named but its document is not in the bundle`,
      record,
    );
  }
}

/** See {@link PolicyChecks}: both checks over records in log order. */
export function checkPolicies(bundle: Bundle, records: readonly LedgerRecord[], findings: Findings): void {
  const checks = new PolicyChecks(bundle, findings);
  for (const record of records) checks.record(record);
}

/**
 * The commitments the records hold, gathered as they are read; only when the bundle has openings
 * (else nothing is kept).
 */
export class HeldCommitments {
  readonly held = new Set<string>();
  readonly #wanted: boolean;

  constructor(bundle: Bundle) {
    this.#wanted = bundle.openings !== undefined && bundle.openings.length > 0;
  }

  record(record: LedgerRecord): void {
    if (!this.#wanted) return;
    for (const commitment of recordCommitments(record)) this.held.add(commitment);
  }
}

/**
 * `opening`: each opening opens its commitment, and that commitment is held by some record.
 * @param held the records' commitments (see {@link HeldCommitments}).
 */
export function checkOpeningsHeld(bundle: Bundle, held: ReadonlySet<string>, findings: Findings): void {
  if (bundle.openings === undefined || bundle.openings.length === 0) return;
  for (const opening of bundle.openings) {
    const salt = Buffer.from(opening.salt, 'base64url');
    if (salt.toString('base64url') !== opening.salt || salt.length !== 16)
      findings.fail(
        'opening',
        `the opening of ${opening.commitment} has a salt that is not 16 bytes of base64url`,
      );
    else if (!opens(opening.commitment, opening.salt, opening.value))
      findings.fail(
        'opening',
        `the opening of ${opening.commitment} does not open it (salt or value changed)`,
      );
    else if (!held.has(opening.commitment))
      findings.fail('opening', `commitment ${opening.commitment} is opened but no record holds it`);
  }
}

/** `opening` over records in log order (see {@link checkOpeningsHeld}). */
export function checkOpenings(bundle: Bundle, records: readonly LedgerRecord[], findings: Findings): void {
  const held = new HeldCommitments(bundle);
  for (const record of records) held.record(record);
  checkOpeningsHeld(bundle, held.held, findings);
}
