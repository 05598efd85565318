import type { Grant } from '@callgate/protocol';
import type { Store } from '../store/store.js';
import { markConsumed } from './consume.js';
import type { CallVerdict } from './decide.js';
import { type GrantBinding, issueConsumedGrants, issueGrant } from './grants.js';
import type { RunState } from './run-state.js';

/** The grant binding of an allowed verdict in run `runId`. */
export function bindingOf(runId: string, verdict: CallVerdict): GrantBinding {
  return {
    run_id: runId,
    call_id: verdict.call_id,
    tool: verdict.tool,
    arguments_digest: verdict.arguments_digest ?? '',
  };
}

/**
 * Issues the grants of a step's allowed verdicts, in the decisions' own commit (one durable
 * write per step): consumed at once for the calls `consumes(index)` names (their verdicts say
 * `grant_consumed: true`), kept for the others when `issueGrants`. Sets `verdict.grant`; `state`
 * is run `runId`'s. `ttlMs` is the grants' life in ms; `now` epoch ms.
 */
export async function writeStepGrants(
  store: Store,
  runId: string,
  state: RunState,
  decided: readonly CallVerdict[],
  options: { issueGrants: boolean; consumes: (index: number) => boolean; ttlMs: number; now: number },
): Promise<void> {
  const { consumes, ttlMs, now } = options;
  const allowed = (verdict: CallVerdict) => verdict.status === 'allowed' && verdict.arguments_digest;
  const spent = decided.filter((verdict, index) => allowed(verdict) && consumes(index));
  const kept = options.issueGrants
    ? decided.filter((verdict, index) => allowed(verdict) && !consumes(index))
    : [];
  const [consumed, issued] = await Promise.all([
    spent.length === 0
      ? []
      : issueConsumedGrants(
          store,
          spent.map((verdict) => bindingOf(runId, verdict)),
          ttlMs,
          now,
        ),
    Promise.all(kept.map((verdict) => issueGrant(store, bindingOf(runId, verdict), ttlMs, now))),
  ]);
  spent.forEach((verdict, index) => {
    verdict.grant = consumed[index] as Grant;
    verdict.grant_consumed = true;
    markConsumed(state, bindingOf(runId, verdict));
  });
  kept.forEach((verdict, index) => {
    verdict.grant = issued[index] as Grant;
  });
}
