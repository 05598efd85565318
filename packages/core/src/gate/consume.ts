// Consuming grants so that no outcome can contradict the ledger (docs/ledger.md, invariant 2): a
// successful consume is remembered for its call attempt (an outcome may then claim it), a failed
// one is recorded as a `refusal` and ends the call it names `denied`.
import { CallgateError, type StoredGrant } from '@callgate/protocol';
import type { CallRow } from '../store/store.js';
import type { GateContext } from './context.js';
import { consumeGrant, type GrantBinding } from './grants.js';
import { recordOutcome } from './outcomes.js';
import { recordRefusal } from './refusals.js';
import { attemptKey, type RunState } from './run-state.js';

/** The state of an open run, or undefined for an unknown or ended one. */
export type OpenRun = (runId: string) => Promise<RunState | undefined>;

/**
 * Marks the call attempt a grant was bound to as consumed in its run, so that its outcome may
 * claim the grant (also used when a decision consumes its own grant in the same write).
 */
export function markConsumed(
  state: RunState | undefined,
  grant: Pick<StoredGrant, 'call_id' | 'arguments_digest'>,
): void {
  // An attempt no longer held has ended: its outcome is recorded, nothing may claim its grant.
  const call = state?.heldFor(grant.call_id, grant.arguments_digest);
  if (state && call) state.consumed.add(attemptKey(call.call_id, call.attempt));
}

/**
 * {@link consumeGrant}, recorded: on success the call attempt is marked consumed in its run; on a
 * `grant-invalid` refusal a `refusal` record (kind `grant-invalid`, `actor`, the reason) is
 * written to the run the binding names and the open call it names ends `denied`.
 * @throws CallgateError `grant-invalid` on any mismatch, reuse or expiry.
 */
export async function consumeRecorded(
  context: GateContext,
  openRun: OpenRun,
  token: string,
  binding: GrantBinding,
  actor: string | undefined,
): Promise<StoredGrant> {
  let grant: StoredGrant;
  try {
    const state = await openRun(binding.run_id);
    if (state === undefined)
      throw new CallgateError(
        'grant-invalid',
        `run ${binding.run_id} is not open (ended or unknown): no call of it may run now`,
        { call_id: binding.call_id },
      );
    const ended = await endedCall(state, binding);
    if (ended !== undefined)
      throw new CallgateError(
        'grant-invalid',
        `call ${ended.call_id} attempt ${ended.attempt} already ended (${ended.outcome}): its grant may not run it now`,
        { call_id: binding.call_id },
      );
    grant = await consumeGrant(context.store, token, binding, context.clock());
  } catch (error) {
    if (error instanceof CallgateError && error.kind === 'grant-invalid')
      await refuseConsume(context, openRun, binding, error, actor);
    throw error;
  }
  markConsumed(await openRun(binding.run_id), grant);
  return grant;
}

/**
 * The call attempt a grant for `binding` is for, when it has already ended: an ended call never
 * runs, so its unused grant is dead (else the tool would run a call the ledger says was denied
 * or not completed, with no record of it).
 */
async function endedCall(
  state: RunState,
  binding: Pick<GrantBinding, 'call_id' | 'arguments_digest'>,
): Promise<CallRow | undefined> {
  const call = await state.attemptFor(binding.call_id, binding.arguments_digest);
  return call !== undefined && call.outcome !== undefined ? call : undefined;
}

async function refuseConsume(
  context: GateContext,
  openRun: OpenRun,
  binding: GrantBinding,
  error: CallgateError,
  actor: string | undefined,
): Promise<void> {
  const state = await openRun(binding.run_id);
  if (!state) return;
  await recordRefusal(context, state, {
    kind: 'grant-invalid',
    actor: actor ?? null,
    call_id: binding.call_id,
    tool: binding.tool,
    reason: error.message,
  });
  const call = await state.attemptFor(binding.call_id, binding.arguments_digest);
  if (!call || call.outcome !== undefined || call.decision === 'deny' || call.decision === 'refused') return;
  if (state.consumed.has(attemptKey(call.call_id, call.attempt))) return; // it already ran under its grant
  try {
    await recordOutcome(context, state, {
      call_id: call.call_id,
      attempt: call.attempt,
      outcome: 'denied',
      result: { error: error.toBody().error },
      error_kind: 'grant-invalid',
    });
  } catch (recordError) {
    context.logger.error(
      { run_id: binding.run_id, call_id: call.call_id, error: String(recordError) },
      'the refused consume could not end its call',
    );
  }
}

/**
 * Finds and consumes an outstanding grant for `tool` and `arguments_digest` (optionally in one
 * run, and only in runs whose principal is `principal`), marking its call attempt consumed.
 * Returns undefined when none is outstanding.
 */
export async function consumeOutstanding(
  context: GateContext,
  openRun: OpenRun,
  query: { tool: string; arguments_digest: string; run_id?: string; principal?: string },
): Promise<StoredGrant | undefined> {
  const { principal, ...find } = query;
  const now = context.clock();
  const principalOf = new Map<string, string | undefined>();
  for (const grant of await context.store.findGrants({ ...find, now })) {
    const state = await openRun(grant.run_id);
    if (state === undefined) continue; // its run ended: it may not run now
    if ((await endedCall(state, grant)) !== undefined) continue; // its call ended: it may not run now
    if (principal !== undefined) {
      if (!principalOf.has(grant.run_id))
        principalOf.set(grant.run_id, (await context.store.getRun(grant.run_id))?.principal);
      if (principalOf.get(grant.run_id) !== principal) continue;
    }
    const consumed = await context.store.consumeGrant(grant.token_hash, now);
    if (consumed) {
      markConsumed(await openRun(consumed.run_id), consumed);
      return consumed;
    }
  }
  return undefined;
}
