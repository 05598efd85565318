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
 * HMAC-SHA256(run key, SHA-256(JCS(arguments))).
 *
 * An export with openings reveals the key of its run, and opens every vaulted commitment of it: a
 * run the bundle claims to open (it opens some of its calls' arguments, or reveals its key beside
 * any opening) must let every decision's digest be checked. Each
 * decision of such a run whose opening or key is missing is named: a warning, with `strict` a
 * failure. A bundle that opens nothing of a run (an export without openings, or revealing keys
 * only) claims nothing to check for it.
 */
export function checkRunKeys(
  bundle: BundleV3,
  checked: CheckedRecords,
  strict: boolean,
  findings: Findings,
): void {
  const revealed = bundle.run_keys ?? [];
  const opened = bundle.openings ?? [];
  if (revealed.length === 0 && opened.length === 0) return;
  const keys = new Map<string, Uint8Array>();
  const malformed = new Set<string>();
  for (const { run_id, key } of revealed) {
    const bytes = Buffer.from(key, 'base64url');
    if (bytes.length !== 32 || bytes.toString('base64url') !== key) {
      findings.fail('arguments-digest', `the revealed key of run ${run_id} is not 32 bytes of base64url`);
      malformed.add(run_id);
    } else keys.set(run_id, new Uint8Array(bytes));
  }
  const openings = new Map(opened.map((opening) => [opening.commitment, opening]));
  // Per run: whether some decision's arguments are opened, and the decisions left unchecked.
  const openedRuns = new Set<string>();
  const unchecked = new Map<string, Array<{ record: object; missing: 'opening' | 'key' }>>();
  // Rare (a bundle revealing run keys or openings): the records are read again from their source.
  for (let index = 0; index < checked.seqs.length; index++) {
    const record = wellFormedAt(checked, index);
    if (record?.type !== 'call-decision' || record.v !== 2) continue;
    if (record.arguments_digest === null || record.arguments_commitment === null) continue;
    const key = keys.get(record.run_id);
    const opening = openings.get(record.arguments_commitment);
    if (opening !== undefined) openedRuns.add(record.run_id);
    if (key === undefined || opening === undefined) {
      if (malformed.has(record.run_id)) continue; // reported above
      const list = unchecked.get(record.run_id) ?? [];
      list.push({ record, missing: opening === undefined ? 'opening' : 'key' });
      unchecked.set(record.run_id, list);
      continue;
    }
    if (!opens(opening.commitment, opening.salt, opening.value)) continue; // reported by `opening`
    const expected = keyedArgumentsDigest(key, argumentsDigest(fastCanonicalJson(opening.value)));
    if (expected !== record.arguments_digest)
      findings.fail(
        'arguments-digest',
        `call ${record.call_id}'s arguments_digest is not the keyed digest of its opened arguments under the revealed run key`,
        record,
      );
  }
  for (const [runId, list] of unchecked) {
    // A run claimed: some of its calls' arguments opened, or its key revealed beside openings.
    if (!openedRuns.has(runId) && !(opened.length > 0 && keys.has(runId))) continue;
    for (const { record, missing } of list) {
      const callId = (record as { call_id?: string }).call_id;
      const message =
        missing === 'opening'
          ? `call ${callId}'s arguments_digest could not be checked: the bundle opens other calls of run ${runId} but not this one's arguments (an opening removed?)`
          : `call ${callId}'s arguments_digest could not be checked: the bundle opens its arguments but does not reveal the key of run ${runId} (run_keys emptied?)`;
      if (strict) findings.fail('arguments-digest', message, record);
      else findings.warn(`${message} (--strict makes this a failure)`);
    }
  }
}
