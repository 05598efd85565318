// The calls of one callgate run as a framework adapter sees them, from decision to outcome,
// shared by the TypeScript adapters. A framework's idiom lives in the adapter, never here.

import { type Grant, isCallgateError, type ToolCall, type ToolSpec } from '@callgate/protocol';
import type { ApprovalState } from './approvals.js';
import { sameArguments } from './call-arguments.js';
import { approvalRefusal, type Refusal, refusalOf } from './call-refusals.js';
import type { CallVerdict } from './decide.js';
import type { Governor } from './governor.js';
import type { Logger } from './logger.js';

export { runArguments, sameArguments } from './call-arguments.js';
export type { Refusal } from './call-refusals.js';
export { approvalRefusal, refusalOf, refusalText } from './call-refusals.js';

/** One call the adapter is tracking. */
export interface GovernedCall {
  /** The framework's id for the call (`''` when it gave none). */
  key: string;
  /** callgate's call id: the framework's, or the one callgate minted. */
  callId: string;
  /** The tool's name (`''` for a call adopted without it, until its approval names it). */
  tool: string;
  /** The attempt callgate recorded; absent for a call adopted from an approval. */
  readonly attempt?: number;
  /** What callgate decided: run it, wait for a person, or refuse it. */
  readonly status: 'allowed' | 'pending' | 'refused';
  readonly verdict?: CallVerdict;
  readonly approvalId?: string;
  /** Why the call is refused (status `refused`). */
  readonly error?: Refusal;
  /** The grant to consume before running, once the call is cleared (allowed, or approved). */
  grant?: Grant;
  /** The arguments to run with, once cleared: parsed, validated, scrubbed (or a permitted edit). */
  arguments?: Record<string, unknown>;
  /** True when a reviewer's edit of the arguments was approved (the policy allows edits). */
  edited?: boolean;
  /**
   * The values the framework adds to the arguments before the call runs (`ToolCall.injected`), as
   * sent with the decision or, for a call cleared by an approval, as the approval holds them (what
   * the reviewer saw): the call runs with exactly these.
   */
  injected?: Record<string, unknown>;
  /** Set once the outcome is recorded: nothing more may happen to the call. */
  ended: boolean;
}

/** Options of {@link GovernedCalls}. */
export interface GovernedCallsOptions {
  governor: Governor;
  runId: string;
  /** Longest wait for a person's answer, in ms. Default 5 minutes (the default policy wait). */
  approvalWaitMs?: number;
  logger?: Logger;
}

/** A call that started: the time it started, for the duration recorded with its outcome. */
export interface StartedCall {
  call: GovernedCall;
  startedAt: number;
}

/** A call's `injected` values when they are an object with at least one value. */
function injectedOf(call: ToolCall | undefined): Record<string, unknown> | undefined {
  const injected = call?.injected;
  if (injected === null || typeof injected !== 'object' || Array.isArray(injected)) return undefined;
  return Object.keys(injected).length > 0 ? (injected as Record<string, unknown>) : undefined;
}

/**
 * The calls of one run: decides them through a {@link Governor}, waits for approvals, consumes
 * grants right before a tool runs and records every outcome. Fails closed: when the governor
 * cannot be reached a call is refused with `gate-unavailable`, never run.
 */
export class GovernedCalls {
  readonly governor: Governor;
  readonly runId: string;
  readonly approvalWaitMs: number;
  readonly #logger: Logger | undefined;
  readonly #calls = new Map<string, GovernedCall[]>();
  readonly #sentSpecs = new Set<string>();
  readonly #taken = new WeakSet<GovernedCall>();

  constructor(options: GovernedCallsOptions) {
    this.governor = options.governor;
    this.runId = options.runId;
    this.approvalWaitMs = options.approvalWaitMs ?? 300_000;
    this.#logger = options.logger;
  }

  /**
   * Decides a step's calls before any of them runs and returns one tracked call per call, in
   * order. `keys` are the framework's ids (default each call's `id`, or `''`); `specs` are the
   * tools' specs, sent once so the engine can validate calls of tools it does not know yet.
   */
  async decide(
    calls: readonly ToolCall[],
    options: {
      message?: { role: string; content?: unknown };
      keys?: readonly string[];
      specs?: readonly ToolSpec[];
    } = {},
  ): Promise<GovernedCall[]> {
    const tools = (options.specs ?? []).filter((spec) => !this.#sentSpecs.has(spec.name));
    const keyOf = (index: number) => options.keys?.[index] ?? calls[index]?.id ?? '';
    const decide = (specs: ToolSpec[]) =>
      this.governor.decide(this.runId, calls, {
        ...(options.message ? { message: options.message } : {}),
        ...(specs.length > 0 ? { tools: specs } : {}),
      });
    let verdicts: CallVerdict[];
    try {
      try {
        verdicts = await decide(tools);
      } catch (error) {
        // A server that knows a tool with another spec keeps its own: decide with it.
        if (!(isCallgateError(error) && error.kind === 'conflict' && tools.length > 0)) throw error;
        verdicts = await decide([]);
      }
      for (const spec of tools) this.#sentSpecs.add(spec.name);
    } catch (error) {
      this.#logger?.error(
        { error: String(error), run_id: this.runId },
        'callgate could not decide; refusing the calls',
      );
      const refusal = refusalOf(error);
      return calls.map((call, index) =>
        this.#track({
          key: keyOf(index),
          callId: call.id || '',
          tool: call.tool,
          status: 'refused',
          error: refusal,
          ended: false,
        }),
      );
    }
    return verdicts.map((verdict, index) =>
      this.#track({
        key: keyOf(index),
        callId: verdict.call_id,
        tool: verdict.tool,
        attempt: verdict.attempt,
        status: verdict.status,
        verdict,
        ...(verdict.approval ? { approvalId: verdict.approval.id } : {}),
        ...(verdict.status === 'refused'
          ? { error: verdict.error ?? { kind: 'internal', message: 'refused' } }
          : {}),
        ...(verdict.grant ? { grant: verdict.grant } : {}),
        ...(verdict.status === 'allowed' ? { arguments: verdict.arguments ?? {} } : {}),
        ...(verdict.status !== 'refused' && injectedOf(calls[index])
          ? { injected: injectedOf(calls[index]) }
          : {}),
        ended: false,
      }),
    );
  }

  /**
   * Tracks a call the adapter knows only by the approval it is waiting on (e.g. named in a
   * framework state resumed in another process). {@link settle} then checks the approval is for
   * this run, tool and call before the call may run.
   */
  adopt(key: string, tool: string | undefined, approvalId: string): GovernedCall {
    return this.#track({ key, callId: key, tool: tool ?? '', status: 'pending', approvalId, ended: false });
  }

  /** Files `call` under `key` instead: e.g. once a minted id replaces a missing one in the framework's history. */
  rekey(call: GovernedCall, key: string): void {
    const list = this.#calls.get(call.key);
    const index = list?.indexOf(call) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
    if (list?.length === 0) this.#calls.delete(call.key);
    call.key = key;
    this.#track(call);
  }

  #track(call: GovernedCall): GovernedCall {
    const list = this.#calls.get(call.key) ?? [];
    list.push(call);
    this.#calls.set(call.key, list);
    return call;
  }

  /** The oldest call under `key` whose outcome is not recorded yet. */
  open(key: string): GovernedCall | undefined {
    return this.#calls.get(key)?.find((call) => !call.ended);
  }

  /**
   * Takes the call under `key` that a framework is about to run with `input`, for frameworks that
   * run each tool call once through one hook: the oldest one not ended and not taken yet, preferring
   * one decided with these arguments. A call id given twice in one step is two calls; each is taken
   * by the run of its own arguments, never both by one (each attempt then gets its own outcome).
   */
  take(key: string, input: unknown): GovernedCall | undefined {
    const open = (this.#calls.get(key) ?? []).filter((call) => !call.ended && !this.#taken.has(call));
    const call =
      open.find((candidate) =>
        sameArguments(candidate.arguments ?? candidate.verdict?.arguments ?? {}, input),
      ) ?? open[0];
    if (call) this.#taken.add(call);
    return call;
  }

  /** Every call under `key`, oldest first. */
  all(key: string): readonly GovernedCall[] {
    return this.#calls.get(key) ?? [];
  }

  /**
   * Clears a pending call or says why it may not run. An allowed call is clear at once; a
   * pending one waits up to `waitMs` (default {@link approvalWaitMs}) for its approval, which is
   * withdrawn if still pending then, and must be an approval of this run, tool and call. On
   * `approved` the call gets its grant and arguments. Records nothing (see {@link refuse}).
   */
  async settle(
    call: GovernedCall,
    waitMs = this.approvalWaitMs,
    signal?: AbortSignal,
  ): Promise<Refusal | undefined> {
    if (call.status === 'refused') return call.error ?? { kind: 'internal', message: 'refused' };
    if (call.grant) return undefined;
    if (!call.approvalId)
      return { kind: 'grant-invalid', message: `no grant was issued for call ${call.callId}` };
    const approvalId = call.approvalId;
    let state: ApprovalState;
    try {
      state = await this.governor.awaitApproval(approvalId, { waitMs, ...(signal ? { signal } : {}) });
      if (state.approval.status === 'pending') {
        const reason = signal?.aborted ? 'the run was cancelled' : `no answer within ${waitMs} ms`;
        await this.governor.withdrawApproval(approvalId, reason);
        state = await this.governor.awaitApproval(approvalId, { waitMs: 0 });
      }
    } catch (error) {
      return refusalOf(error);
    }
    const { approval } = state;
    const sameCall = call.key === '' ? approval.call_id.startsWith('cg-') : approval.call_id === call.callId;
    if (approval.run_id !== this.runId || (call.tool !== '' && approval.tool !== call.tool) || !sameCall) {
      return {
        kind: 'grant-invalid',
        message: `approval ${approval.id} was made for another call (${approval.tool} ${approval.call_id} in run ${approval.run_id})`,
      };
    }
    if (approval.status !== 'approved' || !state.grant) return approvalRefusal(approval);
    call.callId = approval.call_id;
    call.tool = approval.tool;
    call.grant = state.grant;
    call.arguments =
      state.arguments ?? call.verdict?.arguments ?? (approval.arguments as Record<string, unknown>) ?? {};
    if (approval.edited) call.edited = true;
    if (approval.injected) call.injected = approval.injected;
    return undefined;
  }

  /** Records that `call` was refused (outcome `denied`) and ends it. Safe to call twice. */
  async refuse(call: GovernedCall, error: Refusal): Promise<void> {
    if (call.ended) return;
    call.ended = true;
    if (!call.verdict && !call.approvalId) return; // never reached the engine: nothing to record against
    try {
      await this.governor.recordOutcome(this.runId, {
        call_id: call.callId,
        ...(call.attempt !== undefined ? { attempt: call.attempt } : {}),
        outcome: 'denied',
        result: { error },
        error_kind: error.kind,
      });
    } catch (recordError) {
      this.#logger?.error(
        { error: String(recordError), call_id: call.callId },
        'callgate could not record a refusal',
      );
    }
  }

  /**
   * Starts a cleared call: settles it if pending, then consumes its grant, atomically and once
   * (`grant-invalid` on any mismatch, reuse or expiry). A call that may not run is recorded as
   * refused and its refusal returned; otherwise run the tool and call {@link complete}.
   */
  async start(call: GovernedCall, signal?: AbortSignal): Promise<StartedCall | { error: Refusal }> {
    if (call.ended) return { error: { kind: 'grant-invalid', message: `call ${call.callId} already ended` } };
    const refusal = await this.settle(call, this.approvalWaitMs, signal);
    if (refusal) {
      await this.refuse(call, refusal);
      return { error: refusal };
    }
    const grant = call.grant as Grant;
    try {
      await this.governor.consumeGrant(grant.token, {
        run_id: this.runId,
        call_id: call.callId,
        tool: call.tool,
        arguments_digest: grant.arguments_digest,
      });
    } catch (error) {
      const refused = refusalOf(error, 'grant-invalid');
      await this.refuse(call, refused);
      return { error: refused };
    }
    call.ended = true;
    return { call, startedAt: performance.now() };
  }

  /** Records how a started call ended: its result, or the error it threw (`tool-error`). */
  async complete(
    started: StartedCall,
    outcome: { ok: true; result: unknown } | { ok: false; error: unknown },
  ): Promise<void> {
    const { call } = started;
    const duration_ms = performance.now() - started.startedAt;
    const base = {
      call_id: call.callId,
      ...(call.attempt !== undefined ? { attempt: call.attempt } : {}),
      grant_consumed: true,
      duration_ms,
    };
    if (outcome.ok) {
      await this.governor.recordOutcome(this.runId, {
        ...base,
        outcome: 'ok',
        result: outcome.result ?? null,
      });
      return;
    }
    const thrown = outcome.error;
    const error: Refusal = isCallgateError(thrown)
      ? thrown.toBody().error
      : { kind: 'tool-error', message: thrown instanceof Error ? thrown.message : String(thrown) };
    await this.governor.recordOutcome(this.runId, {
      ...base,
      outcome: 'error',
      result: { error },
      error_kind: error.kind,
    });
  }

  /**
   * Runs a call end to end: {@link start}, then `execute` with a copy of the decided arguments
   * and the call's `injected` values set over them (the effective arguments the gate digested),
   * then {@link complete}. Returns the refusal instead when the call may not run; rethrows what
   * `execute` throws (after recording it).
   */
  async run<T>(
    call: GovernedCall,
    execute: (args: Record<string, unknown>) => Promise<T> | T,
    signal?: AbortSignal,
  ): Promise<{ ok: true; result: T } | { ok: false; error: Refusal }> {
    const started = await this.start(call, signal);
    if ('error' in started) return { ok: false, error: started.error };
    let result: T;
    try {
      result = await execute(structuredClone({ ...call.arguments, ...call.injected }));
    } catch (error) {
      await this.complete(started, { ok: false, error });
      throw error;
    }
    await this.complete(started, { ok: true, result });
    return { ok: true, result };
  }

  /** Ends the run: the engine records calls never completed, then `run-end`. */
  async end(status: 'completed' | 'failed' | 'cancelled' = 'completed'): Promise<void> {
    await this.governor.endRun(this.runId, status);
  }
}
