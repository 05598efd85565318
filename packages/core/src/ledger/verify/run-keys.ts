// The revealed run keys of a `callgate-bundle/3` (record format version 2): with a run's key and
// the opening of a decision's arguments, the verifier recomputes the decision's keyed
// `arguments_digest`; the other records' digests are tied to the decision's by the call checks.
import type { BundleV3 } from '@callgate/protocol';
import { fastCanonicalJson, opens } from '../../json/canonical.js';
import { argumentsDigest, keyedArgumentsDigest } from '../arguments-key.js';
import { type CheckedRecords, wellFormedAt } from './records.js';
import type { Findings } from './report.js';

/**
 * `arguments-digest`: every revealed run key is 32 bytes of base64url, and every version 2
 * `call-decision` of a run whose key is revealed, whose arguments are opened, carries
 * HMAC-SHA256(run key, SHA-256(JCS(arguments))). Without run keys there is nothing to check.
 */
export function checkRunKeys(bundle: BundleV3, checked: CheckedRecords, findings: Findings): void {
  if (bundle.run_keys === undefined || bundle.run_keys.length === 0) return;
  const keys = new Map<string, Uint8Array>();
  for (const { run_id, key } of bundle.run_keys) {
    const bytes = Buffer.from(key, 'base64url');
    if (bytes.length !== 32 || bytes.toString('base64url') !== key)
      findings.fail('arguments-digest', `the revealed key of run ${run_id} is not 32 bytes of base64url`);
    else keys.set(run_id, new Uint8Array(bytes));
  }
  const openings = new Map((bundle.openings ?? []).map((opening) => [opening.commitment, opening]));
  // Rare (a bundle revealing run keys): the records are read again from their source.
  for (let index = 0; index < checked.seqs.length; index++) {
    const record = wellFormedAt(checked, index);
    if (record?.type !== 'call-decision' || record.v !== 2) continue;
    if (record.arguments_digest === null || record.arguments_commitment === null) continue;
    const key = keys.get(record.run_id);
    const opening = openings.get(record.arguments_commitment);
    if (key === undefined || opening === undefined) continue;
    if (!opens(opening.commitment, opening.salt, opening.value)) continue; // reported by `opening`
    const expected = keyedArgumentsDigest(key, argumentsDigest(fastCanonicalJson(opening.value)));
    if (expected !== record.arguments_digest)
      findings.fail(
        'arguments-digest',
        `call ${record.call_id}'s arguments_digest is not the keyed digest of its opened arguments under the revealed run key`,
        record,
      );
  }
}
