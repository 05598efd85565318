// Content checks of the offline verifier: policy documents against their digests, and openings
// against the commitments the records hold.
import type { Bundle, LedgerRecord } from '@callgate/protocol';
import { digestOf, opens } from '../../json/canonical.js';
import { recordCommitments } from '../record.js';
import type { Findings } from './report.js';

/**
 * `policy-digest`: each policy document hashes (RFC 8785, sha256) to its digest.
 * `policy-missing`: every policy digest a decision or policy snapshot names has its document.
 */
export function checkPolicies(bundle: Bundle, records: readonly LedgerRecord[], findings: Findings): void {
  const present = new Set<string>();
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
    else present.add(digest);
  }
  const reported = new Set<string>();
  for (const record of records) {
    if (record.type !== 'call-decision' && record.type !== 'policy-snapshot') continue;
    if (present.has(record.policy_digest) || reported.has(record.policy_digest)) continue;
    reported.add(record.policy_digest);
    findings.fail(
      'policy-missing',
      `policy ${record.policy_digest} is named but its document is not in the bundle`,
      record,
    );
  }
}

/** `opening`: each opening opens its commitment, and that commitment is held by some record. */
export function checkOpenings(bundle: Bundle, records: readonly LedgerRecord[], findings: Findings): void {
  if (bundle.openings === undefined || bundle.openings.length === 0) return;
  const held = new Set(records.flatMap(recordCommitments));
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
