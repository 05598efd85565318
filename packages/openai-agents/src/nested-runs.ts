// Agents used as tools whose inner run stops at an interruption. The SDK returns from the
// agent tool's `invoke` with the inner run's state saved in the outer RunState, and invokes the
// tool again (with `details.resumeState`) once the outer run resumes. For callgate that is one
// call: decided and started once, ended once, when the inner run finally finishes.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { GovernedCall } from '@callgate/core/adapter';
import type { CallgateRunContext } from './run-context.js';

interface Scope {
  interrupted: boolean;
  parent: Scope | undefined;
  /** The callgate run of the calls inside (an agent tool's child run). */
  runId: string | undefined;
}

const scopes = new AsyncLocalStorage<Scope>();

/**
 * Runs `invoke` (an agent tool's) and says whether a governed call inside it, at any depth,
 * stopped at an interruption (see {@link markInterrupted}). Governed calls inside belong to
 * callgate run `runId` when given (see {@link currentRunId}).
 */
export async function runNested<T>(
  invoke: () => Promise<T> | T,
  runId?: string,
): Promise<{ result: T; interrupted: boolean }> {
  const scope: Scope = { interrupted: false, parent: scopes.getStore(), runId };
  const result = await scopes.run(scope, invoke);
  return { result, interrupted: scope.interrupted };
}

/** The callgate run of the agent tool around the current call, if it has one of its own. */
export function currentRunId(): string | undefined {
  for (let scope = scopes.getStore(); scope; scope = scope.parent) if (scope.runId) return scope.runId;
  return undefined;
}

/** Notes that a governed call asked for a person: every agent tool run around it stops there too. */
export function markInterrupted(): void {
  for (let scope = scopes.getStore(); scope; scope = scope.parent) scope.interrupted = true;
}

/** Keeps `call` (started) in the run context until its inner run resumes. */
export function suspend(stored: CallgateRunContext, call: GovernedCall): void {
  stored.suspended ??= {};
  stored.suspended[call.key] = {
    call_id: call.callId,
    tool: call.tool,
    ...(call.attempt !== undefined ? { attempt: call.attempt } : {}),
  };
}

/** The suspended call under `key`, as a started call (its grant is consumed), or undefined. */
export function suspendedCall(stored: CallgateRunContext, key: string): GovernedCall | undefined {
  const suspended = stored.suspended?.[key];
  if (!suspended) return undefined;
  return {
    key,
    callId: suspended.call_id,
    tool: suspended.tool,
    ...(suspended.attempt !== undefined ? { attempt: suspended.attempt } : {}),
    status: 'allowed',
    ended: true,
  };
}

/** Forgets a suspended call once it ended. */
export function resume(stored: CallgateRunContext, key: string): void {
  if (stored.suspended) delete stored.suspended[key];
}
