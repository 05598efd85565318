import {
  type Approval,
  CallgateError,
  type Decision,
  type ErrorBody,
  type Grant,
  isCallgateError,
  type ToolCall,
} from '@callgate/protocol';
import { fastCanonicalJson } from '../json/canonical.js';
import { recordable } from '../json/normalize.js';
import { readArguments } from '../json/safe-json.js';
import { argumentsDigest } from '../ledger/arguments-key.js';
import type { CallRow } from '../store/store.js';
import { commitValue, type GateContext } from './context.js';
import { valueAtPath } from './guardrails.js';
import { mintCallId } from './ids.js';
import type { ProvenanceResult } from './provenance.js';
import { validateArguments } from './registry.js';
import { appendModelMessage } from './run-records.js';
import { attemptKey, type RunState } from './run-state.js';

/**
 * The gate's answer for one call of a step.
 * - `allowed`: the call may run with `arguments` (a `grant` is present when grants were asked for);
 * - `pending`: an approval was created (`approval`); wait for it, then run or refuse;
 * - `refused`: the call must not run; `error` is what the model reads as its result.
 */
export interface CallVerdict {
  call_id: string;
  minted: boolean;
  attempt: number;
  tool: string;
  status: 'allowed' | 'pending' | 'refused';
  /** The arguments that will run: parsed, validated and scrubbed. Absent when they were refused. */
  arguments?: Record<string, unknown>;
  arguments_digest?: string;
  /**
   * Values the framework adds to `arguments` before the call runs (`ToolCall.injected`), by
   * name: the reviewer of an ask sees them, and an `effective-arguments` record carries the
   * digest of the arguments with them set.
   */
  injected?: Record<string, unknown>;
  decision?: Decision;
  approval?: Approval;
  grant?: Grant;
  /** True when the grant was consumed with the decision (the caller runs the call itself). */
  grant_consumed?: boolean;
  error?: ErrorBody['error'];
  provenance?: ProvenanceResult;
}

/** A model message to record with a step (its content is committed, never stored in the ledger). */
export interface ModelMessage {
  role: string;
  content?: unknown;
}

interface Prepared {
  verdict: CallVerdict;
  canonical?: string;
  idempotencyKey?: string;
  /** The digest of the arguments that run (the decided ones with `injected` set), and the injected names. */
  effective?: { digest: string; injected: string[] };
}

/**
 * The values a framework adds to a call's arguments (`ToolCall.injected`), read as arguments are
 * (an object, lossless, within the limits), and the digest of the arguments that run with them.
 * @throws CallgateError `tool-args-invalid` when they are not a JSON object (the path says `injected`)
 */
function effectiveArguments(
  context: GateContext,
  args: Record<string, unknown>,
  injected: unknown,
): { values: Record<string, unknown>; digest: string; injected: string[] } | undefined {
  if (injected === undefined || injected === null) return undefined;
  let values: Record<string, unknown>;
  try {
    values = readArguments(injected, context.jsonLimits);
  } catch (error) {
    if (isCallgateError(error))
      throw new CallgateError('tool-args-invalid', `injected values: ${error.message}`, { path: 'injected' });
    throw error;
  }
  const names = Object.keys(values).sort();
  if (names.length === 0) return undefined;
  return { values, digest: argumentsDigest(fastCanonicalJson({ ...args, ...values })), injected: names };
}

/**
 * The model's arguments as committed in its message, whatever the model sent: as they are when
 * they have a canonical form, else a `callgate-normalize/1` marker (text that is not JSON stays a
 * string and is committed as it is). Returns the RFC 8785 text too (what the commitment hashes).
 */
function rawArguments(value: unknown): { value: unknown; canonical: string } {
  if (value === undefined) return { value: null, canonical: 'null' };
  const committed = recordable(value).value;
  return { value: committed, canonical: fastCanonicalJson(committed) };
}

/**
 * Refuses a call past the run's or the tool's call limit. Counted in decision order, so calls of
 * one step count against each other.
 * @throws CallgateError `run-limit-exceeded`
 */
function checkLimits(context: GateContext, state: RunState, tool: string): void {
  const limits = context.policy().limits;
  const runLimit = limits.run.maxCalls;
  if (runLimit !== undefined && state.callCount >= runLimit) {
    throw new CallgateError(
      'run-limit-exceeded',
      `the run has made ${state.callCount} calls, its limit is ${runLimit}`,
    );
  }
  const toolLimit = limits.tools[tool]?.maxCalls;
  const toolCount = state.toolCounts.get(tool) ?? 0;
  if (toolLimit !== undefined && toolCount >= toolLimit) {
    throw new CallgateError(
      'run-limit-exceeded',
      `${tool} was called ${toolCount} times in this run, its limit is ${toolLimit}`,
    );
  }
}

function refusal(error: unknown): ErrorBody['error'] {
  if (isCallgateError(error)) return error.toBody().error;
  return { kind: 'internal', message: (error as Error)?.message ?? String(error) };
}

/** Identify, validate, scrub and guard one call (DESIGN §3 steps 1–4). */
function prepare(context: GateContext, state: RunState, call: ToolCall, seen: Map<string, number>): Prepared {
  const given = typeof call.id === 'string' && call.id.length > 0 ? call.id : undefined;
  const callId = given ?? mintCallId();
  const attempt = Math.max(state.nextAttempt(callId), (seen.get(callId) ?? 0) + 1);
  seen.set(callId, attempt);
  const tool = typeof call.tool === 'string' ? call.tool : String(call.tool);
  const verdict: CallVerdict = {
    call_id: callId,
    minted: given === undefined,
    attempt,
    tool,
    status: 'refused',
  };
  try {
    const registered = context.registry.get(tool);
    if (!registered) throw new CallgateError('tool-not-found', `no tool named ${JSON.stringify(tool)}`);
    let args = readArguments(call.arguments, context.jsonLimits);
    validateArguments(registered, args);
    const policy = context.policy();
    // Scrubbing works on a copy: the object the caller gave (what the model sent) stays as it was.
    if (policy.scrub.some((name) => Object.hasOwn(args, name))) {
      args = { ...args };
      for (const name of policy.scrub) delete args[name];
    }
    const canonical = fastCanonicalJson(args);
    verdict.arguments = args;
    verdict.arguments_digest = argumentsDigest(canonical);
    const effective = effectiveArguments(context, args, (call as { injected?: unknown }).injected);
    if (effective) verdict.injected = effective.values;
    context.guardrails.check(tool, args);
    const spec = registered.spec;
    let idempotencyKey: string | undefined;
    if (spec.idempotencyKey) {
      const value = valueAtPath(args, spec.idempotencyKey);
      if (value !== undefined) idempotencyKey = fastCanonicalJson(value);
    } else if (spec.annotations?.idempotentHint === false && spec.annotations.readOnlyHint !== true) {
      idempotencyKey = verdict.arguments_digest;
    }
    verdict.provenance = state.provenance.check(args);
    return {
      verdict,
      canonical,
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      ...(effective ? { effective: { digest: effective.digest, injected: effective.injected } } : {}),
    };
  } catch (error) {
    verdict.error = refusal(error);
    return { verdict };
  }
}

/**
 * Decides every call of one step before any of them runs (DESIGN §3 steps 1–6), records the
 * model message, each decision and each approval request, and returns one verdict per call in
 * the order given. Approvals are created here but not waited for.
 */
export async function decideCalls(
  context: GateContext,
  state: RunState,
  calls: readonly ToolCall[],
  options: {
    message?: ModelMessage;
    createApproval: (verdict: CallVerdict, decision: Decision) => Promise<Approval>;
    /**
     * Writes that belong with the decisions (e.g. grants issued for them), queued in the same
     * turn as the decision records so a store that commits per turn commits them together:
     * called with the verdicts once every decision is recorded, before the writes are awaited.
     */
    alsoWrite?: (verdicts: readonly CallVerdict[]) => Promise<unknown>;
  },
): Promise<CallVerdict[]> {
  const runId = state.run.run_id;
  const policy = context.policy();
  const now = context.clock();
  const seen = new Map<string, number>();
  // The arguments exactly as the model sent them, read before parsing and scrubbing (scrubbing
  // removes keys from an object the caller gave).
  const raws = options.message ? calls.map((call) => rawArguments(call.arguments)) : [];
  const prepared = calls.map((call) => prepare(context, state, call, seen));
  const writes: Promise<unknown>[] = [];

  if (!state.policyDigests.has(policy.digest)) {
    state.policyDigests.add(policy.digest);
    writes.push(context.ledger.append(runId, { type: 'policy-snapshot', policy_digest: policy.digest }));
  }
  if (options.message) {
    const message = options.message;
    const toolCalls = calls.map((_call, index) => {
      const verdict = (prepared[index] as Prepared).verdict;
      const raw = raws[index] as { value: unknown; canonical: string };
      return {
        call_id: verdict.call_id,
        minted: verdict.minted,
        tool: verdict.tool,
        arguments_commitment: commitValue(context, raw.value, writes, raw.canonical),
      };
    });
    appendModelMessage(context, runId, message, toolCalls, writes);
  }

  for (const item of prepared) {
    const { verdict } = item;
    let decision: Decision | undefined;
    if (!verdict.error) {
      try {
        checkLimits(context, state, verdict.tool);
      } catch (error) {
        verdict.error = refusal(error);
      }
    }
    if (!verdict.error) {
      const registered = context.registry.get(verdict.tool);
      decision = policy.evaluate({
        tool: {
          name: verdict.tool,
          ...(registered?.spec.annotations ? { annotations: registered.spec.annotations } : {}),
          trust: registered?.spec.trust ?? (policy.isUntrusted(verdict.tool) ? 'untrusted' : 'trusted'),
        },
        args: verdict.arguments ?? {},
        call: { id: verdict.call_id, attempt: verdict.attempt, minted: verdict.minted },
        run: {
          id: runId,
          principal: state.run.principal,
          framework: state.run.framework,
          labels: state.run.labels,
        },
        provenance: verdict.provenance ?? { untrusted: false, sources: [] },
      });
      verdict.decision = decision;
      state.count(verdict.tool);
      if (item.idempotencyKey !== undefined && decision.effect !== 'deny') {
        const done = await context.store.getIdempotencyKey(verdict.tool, item.idempotencyKey);
        const open = state.openUnderKey(verdict.tool, item.idempotencyKey);
        if (done === undefined && open !== undefined) {
          verdict.error = refusal(
            new CallgateError(
              'idempotency-blocked',
              `${verdict.tool} is already doing this side effect (call ${open}, not ended yet)`,
            ),
          );
        } else if (done !== undefined) {
          verdict.error = refusal(
            new CallgateError(
              'idempotency-blocked',
              `${verdict.tool} already completed this side effect (call ${done})`,
            ),
          );
        }
      }
      if (!verdict.error) {
        if (decision.effect === 'deny') {
          verdict.error = { kind: 'policy-denied', message: decision.reason, rules: decision.rules };
        } else {
          verdict.status = decision.effect === 'allow' ? 'allowed' : 'pending';
        }
      }
    }
    const row: CallRow = {
      run_id: runId,
      call_id: verdict.call_id,
      attempt: verdict.attempt,
      minted: verdict.minted,
      tool: verdict.tool,
      arguments_digest: verdict.arguments_digest ?? null,
      decision: decision && !verdict.error ? decision.effect : 'refused',
      rules: decision?.rules ?? [],
      ...(item.idempotencyKey !== undefined ? { idempotency_key: item.idempotencyKey } : {}),
      decided_at: now,
    };
    state.remember(row);
    if (verdict.error) state.refusalKinds.set(attemptKey(row.call_id, row.attempt), verdict.error.kind);
    writes.push(
      context.ledger.append(runId, {
        type: 'call-decision',
        call_id: verdict.call_id,
        minted: verdict.minted,
        attempt: verdict.attempt,
        tool: verdict.tool,
        arguments_digest: verdict.arguments_digest ?? null,
        arguments_commitment:
          item.canonical === undefined
            ? null
            : commitValue(context, verdict.arguments, writes, item.canonical),
        effect: verdict.error ? 'deny' : (decision?.effect ?? 'deny'),
        rules: decision?.rules ?? [],
        reason: verdict.error?.message ?? decision?.reason ?? '',
        policy_digest: policy.digest,
        ...(verdict.error ? { error_kind: verdict.error.kind } : {}),
        ...(verdict.provenance?.untrusted ? { provenance_untrusted: true } : {}),
      }),
    );
    if (item.effective && verdict.arguments_digest) {
      writes.push(
        context.ledger.append(runId, {
          type: 'effective-arguments',
          call_id: verdict.call_id,
          attempt: verdict.attempt,
          tool: verdict.tool,
          arguments_digest: verdict.arguments_digest,
          effective_arguments_digest: item.effective.digest,
          injected: item.effective.injected,
        }),
      );
    }
    if (verdict.status === 'pending' && decision) {
      const approval = await options.createApproval(verdict, decision);
      verdict.approval = approval;
      row.approval_id = approval.id;
      verdict.error = undefined;
    }
    writes.push(context.store.putCall(row));
  }
  const verdicts = prepared.map((item) => item.verdict);
  if (options.alsoWrite) writes.push(options.alsoWrite(verdicts));
  await Promise.all(writes);
  return verdicts;
}
