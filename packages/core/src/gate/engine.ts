import {
  type AnyBundle,
  type Approval,
  type ApprovalResponse,
  CallgateError,
  type Grant,
  type Outcome,
  type StoredGrant,
  type ToolCall,
  type ToolSpec,
} from '@callgate/protocol';
import { canonicalJson } from '../json/canonical.js';
import { DEFAULT_JSON_LIMITS } from '../json/safe-json.js';
import type { RunExportOptions } from '../ledger/export.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Policy } from '../policy/index.js';
import type { ApprovalQuery, RunRow, Store } from '../store/store.js';
import { rememberAgentTools, restoreAgentTools } from './agent-tools.js';
import { ApprovalCoordinator, type ApprovalState } from './approvals.js';
import { consumeOutstanding, consumeRecorded } from './consume.js';
import { type GateContext, guardedLedger } from './context.js';
import { type CallVerdict, decideCalls, type ModelMessage } from './decide.js';
import type { DecideOptions, EngineOptions, RunStart } from './engine-options.js';
import type { GrantBinding } from './grants.js';
import { Guardrails } from './guardrails.js';
import { endIdleRuns } from './idle-runs.js';
import { uuidv7 } from './ids.js';
import { silentLogger } from './logger.js';
import { type CallOutcomeReport, closeOpenCalls, recordOutcome } from './outcomes.js';
import { type RefusedAttempt, recordLateAnswer, recordRefusal } from './refusals.js';
import { ToolRegistry } from './registry.js';
import { type ExchangeReport, recordExchange, recordMessage } from './run-records.js';
import { RunStates } from './run-state.js';
import { writeStepGrants } from './step-grants.js';
import { beginOutcomes, type StepOutcome } from './step-outcomes.js';

export type { DecideOptions, EngineOptions, RunStart } from './engine-options.js';
export { bindingOf } from './step-grants.js';

/**
 * The engine: one per process (or server). Decides tool calls, routes approvals, issues and
 * consumes grants, records outcomes, and writes every event to the ledger.
 */
export class Engine {
  readonly registry: ToolRegistry;
  readonly store: Store;
  readonly ledger: Ledger;
  readonly #context: GateContext;
  readonly #runs: RunStates;
  readonly #approvals: ApprovalCoordinator;
  readonly #policyDocuments = new Set<string>();
  #policy: Policy;
  #toolsRestored: Promise<void> | undefined;
  readonly #idleRunMs: number | undefined;
  readonly #idleTimer: ReturnType<typeof setInterval> | undefined;

  constructor(options: EngineOptions) {
    this.registry = new ToolRegistry(options.tools ?? []);
    this.store = options.store;
    this.ledger = options.ledger;
    this.#policy = options.policy;
    const unrecordable = new Map<string, string>();
    this.#context = {
      store: options.store,
      ledger: guardedLedger(options.ledger, unrecordable),
      unrecordable,
      registry: this.registry,
      guardrails: new Guardrails(options.guardrails),
      jsonLimits: { ...DEFAULT_JSON_LIMITS, ...options.jsonLimits },
      clock: options.clock ?? Date.now,
      logger: options.logger ?? silentLogger,
      vault: options.vault ?? false,
      policy: () => this.#policy,
    };
    this.#runs = new RunStates(options.store);
    this.#approvals = new ApprovalCoordinator(
      this.#context,
      options.approvalPorts ?? [],
      options.approvalChannel,
    );
    this.#idleRunMs = options.idleRunMs;
    if (this.#idleRunMs !== undefined && this.#idleRunMs > 0) {
      const every = Math.max(1_000, Math.min(60_000, Math.floor(this.#idleRunMs / 4)));
      this.#idleTimer = setInterval(() => {
        this.endIdleRuns().catch((error) =>
          this.#context.logger.error({ error: String(error) }, 'ending idle runs failed'),
        );
      }, every);
      this.#idleTimer.unref?.();
    }
  }

  /** The state of an open run the agent just acted in (for the idle limit). */
  async #active(runId: string) {
    const state = await this.#runs.get(runId);
    state.lastActivity = this.#context.clock();
    return state;
  }

  /**
   * Ends every run this engine has seen whose agent did nothing for the idle limit
   * (`idleRunMs`): its pending approvals are withdrawn (no reviewer approves a call that will
   * never run), its open calls closed, and the run ended `abandoned`. Returns the runs ended.
   */
  endIdleRuns(now = this.#context.clock()): Promise<string[]> {
    return endIdleRuns(this.#runs.open(), this.#idleRunMs, now, {
      pending: (runId) => this.store.listApprovals({ run_id: runId, status: 'pending' }),
      withdraw: (approvalId, reason) => this.#approvals.withdraw(approvalId, reason),
      end: (runId) => this.endRun(runId, 'abandoned'),
    });
  }

  /** The policy in force. */
  get policy(): Policy {
    return this.#policy;
  }

  /** Puts a new policy in force; each run records its snapshot before its next decision. */
  setPolicy(policy: Policy): void {
    this.#policy = policy;
  }

  async #rememberPolicy(policy: Policy): Promise<void> {
    if (this.#policyDocuments.has(policy.digest)) return;
    await this.store.setMeta(`policy:${policy.digest}`, canonicalJson(policy.document));
    this.#policyDocuments.add(policy.digest);
  }

  /**
   * Keeps tool specs an agent registered (e.g. through the HTTP API) in the store, so that the
   * engine of a restarted server knows them before its first decision (see agent-tools.ts).
   */
  rememberTools(specs: readonly ToolSpec[]): Promise<void> {
    return rememberAgentTools(this.store, specs);
  }

  /**
   * Adds the tool specs agents registered in an earlier process that the registry does not know
   * (configured tools win). Done once; `decide` awaits it.
   */
  restoreTools(): Promise<void> {
    this.#toolsRestored ??= restoreAgentTools(this.store, this.registry, this.#context.logger);
    return this.#toolsRestored;
  }

  /** Starts a run (`run-start` record) and returns it; `run_id` is a UUIDv7. */
  async startRun(start: RunStart): Promise<RunRow> {
    const now = this.#context.clock();
    const run: RunRow = {
      run_id: uuidv7(now),
      principal: start.principal,
      framework: start.framework,
      labels: start.labels ?? {},
      ...(start.parent_run_id ? { parent_run_id: start.parent_run_id } : {}),
      status: 'running',
      started_at: now,
    };
    await this.store.createRun(run);
    this.#runs.add(run).lastActivity = now;
    await this.#context.ledger.append(run.run_id, {
      type: 'run-start',
      principal: run.principal,
      framework: run.framework,
      labels: run.labels,
      ...(run.parent_run_id ? { parent_run_id: run.parent_run_id } : {}),
    });
    return run;
  }

  /**
   * Decides every call of one step before any runs (DESIGN §3 steps 1–6). Returns one verdict
   * per call, in order: `allowed` (with a grant when `issueGrants`), `pending` (an approval was
   * created and routed) or `refused` (with the error the model should read).
   *
   * @throws CallgateError `not-found` / `conflict` for an unknown or ended run.
   */
  async decide(
    runId: string,
    calls: readonly ToolCall[],
    options: DecideOptions = {},
  ): Promise<CallVerdict[]> {
    return (await this.decideStep(runId, calls, options)).verdicts;
  }

  /**
   * {@link decide}, first recording `options.outcomes` (the previous step's, in order, each with
   * every check of {@link recordOutcome}) in the same commit as the decisions: one durable write
   * per step (one fsync under `synchronous=FULL`). Returns the verdicts and what became of each
   * outcome, in order (see {@link beginOutcomes}); everything is durable when it resolves.
   *
   * @throws CallgateError as {@link decide}; or the failure to record an outcome (nothing is
   *   decided then).
   */
  async decideStep(
    runId: string,
    calls: readonly ToolCall[],
    options: DecideOptions = {},
  ): Promise<{ verdicts: CallVerdict[]; outcomes: StepOutcome[] }> {
    const state = await this.#active(runId);
    await this.restoreTools();
    await this.#rememberPolicy(this.#policy);
    const carried = options.outcomes?.length
      ? await beginOutcomes(this.#context, state, options.outcomes)
      : { settled: [], written: Promise.resolve() };
    const lost = this.#context.unrecordable.get(runId);
    if (lost !== undefined) {
      await carried.written.catch(() => undefined);
      throw new CallgateError(
        'gate-unavailable',
        `run ${runId} can no longer be recorded (${lost}): callgate refuses its calls rather than run them unrecorded`,
      );
    }
    const consume = options.consumeGrants;
    const consumes = (index: number) => (Array.isArray(consume) ? consume[index] === true : consume === true);
    const ttlMs = this.#policy.approval.ttlMs;
    const verdicts = await decideCalls(this.#context, state, calls, {
      ...(options.message ? { message: options.message } : {}),
      createApproval: (verdict, decision) => this.#approvals.create(runId, verdict, decision),
      ...(options.issueGrants || consume
        ? {
            // Grants are issued (and consumed, when asked) in the decisions' own commit: one
            // durable write per step.
            alsoWrite: (decided) =>
              writeStepGrants(this.store, runId, state, decided, {
                issueGrants: Boolean(options.issueGrants),
                consumes,
                ttlMs,
                now: this.#context.clock(),
              }),
          }
        : {}),
    });
    await carried.written;
    return { verdicts, outcomes: carried.settled };
  }

  /**
   * Records a model message that asked for no tool calls (e.g. the final answer). Its content
   * is committed (kept in the vault when the vault is on), never stored in the ledger.
   */
  async recordMessage(runId: string, message: ModelMessage): Promise<void> {
    await this.#active(runId);
    await recordMessage(this.#context, runId, message);
  }

  /**
   * Records an outage (`gap`): `calls` calls ran without a decision between `from_ts` and
   * `to_ts` (epoch ms) because the gate could not be reached and the client's fail mode was
   * `open`. The auditor sees the hole instead of a silent absence.
   */
  async recordGap(
    runId: string,
    gap: { reason: string; from_ts: number; to_ts: number; calls: number },
  ): Promise<void> {
    await this.#active(runId);
    await this.#context.ledger.append(runId, { type: 'gap', ...gap });
  }

  /**
   * Records an MCP request passed through to an upstream that is not a tool call (resources,
   * prompts, completions, logging). Parameters and result are committed, never stored.
   */
  async recordExchange(runId: string, exchange: ExchangeReport): Promise<void> {
    await this.#active(runId);
    await recordExchange(this.#context, runId, exchange);
  }

  /** An approval, waiting up to `waitMs` (long-poll) for it to be answered. */
  approval(approvalId: string, options?: { waitMs?: number; signal?: AbortSignal }): Promise<ApprovalState> {
    return this.#approvals.get(approvalId, options);
  }

  /** Approvals by status or run, oldest first; pending ones past their wait limit are expired first. */
  async listApprovals(query?: ApprovalQuery): Promise<Approval[]> {
    const now = this.#context.clock();
    const listed = await this.store.listApprovals(query);
    const expired = listed.filter((approval) => approval.status === 'pending' && approval.expires_at <= now);
    if (expired.length === 0) return listed;
    for (const approval of expired) await this.#approvals.expire(approval.id);
    return this.store.listApprovals(query);
  }

  /**
   * Answers a pending approval (see {@link ApprovalCoordinator.respond}). An answer to an approval
   * that is no longer pending is refused and recorded in the approval's run as a `refusal`
   * (`approval-not-pending`, the reviewer as actor).
   */
  async respondToApproval(approvalId: string, response: ApprovalResponse): Promise<ApprovalState> {
    try {
      return await this.#approvals.respond(approvalId, response);
    } catch (error) {
      if (error instanceof CallgateError && error.kind === 'conflict')
        await recordLateAnswer(this.#context, (runId) => this.#openRun(runId), approvalId, response, error);
      throw error;
    }
  }

  /** The state of an open run, or undefined for an unknown or ended one. */
  async #openRun(runId: string) {
    try {
      return await this.#runs.get(runId);
    } catch {
      return undefined;
    }
  }

  /**
   * Records a refused attempt aimed at an open run (a `refusal` record, bounded per run; see
   * docs/ledger.md, invariant 3): e.g. the MCP gateway's call of a tool outside the profile.
   * Does nothing for an unknown or ended run. Never throws.
   */
  async recordRefusedAttempt(runId: string, attempt: RefusedAttempt): Promise<void> {
    const state = await this.#openRun(runId);
    if (state) await recordRefusal(this.#context, state, attempt);
  }

  /** Withdraws a pending approval; undefined when it was not pending. */
  withdrawApproval(approvalId: string, reason?: string): Promise<ApprovalState | undefined> {
    return this.#approvals.withdraw(approvalId, reason);
  }

  /** Calls `listener` with every approval created or resolved; returns an unsubscribe function. */
  onApproval(listener: (approval: Approval) => void): () => void {
    return this.#approvals.subscribe(listener);
  }

  /**
   * Consumes a grant for exactly this call: atomically, once. A consume that fails is recorded
   * (docs/ledger.md, invariant 2; see consume.ts): a `refusal` (`grant-invalid`) in the run the
   * binding names, and the call it names, when open there, ends `denied`.
   * @throws CallgateError `grant-invalid` on any mismatch, reuse or expiry.
   */
  consumeGrant(token: string, binding: GrantBinding, options: { actor?: string } = {}): Promise<StoredGrant> {
    return consumeRecorded(this.#context, (runId) => this.#openRun(runId), token, binding, options.actor);
  }

  /**
   * Finds and consumes an outstanding grant for `tool` and `arguments_digest` (optionally in one
   * run, and only in runs whose principal is `principal`): how a gateway honours a call a hook
   * already decided, so a person is never asked twice. Returns undefined when none is
   * outstanding.
   */
  consumeOutstandingGrant(query: {
    tool: string;
    arguments_digest: string;
    run_id?: string;
    principal?: string;
  }): Promise<StoredGrant | undefined> {
    return consumeOutstanding(this.#context, (runId) => this.#openRun(runId), query);
  }

  /** Records how a call ended. See {@link recordOutcome}. */
  async recordOutcome(runId: string, report: CallOutcomeReport): Promise<Outcome> {
    return recordOutcome(this.#context, await this.#active(runId), report);
  }

  /**
   * Ends a run: calls decided but never completed are recorded as `decided-not-completed`
   * (asks never approved as `denied`), then `run-end`.
   */
  async endRun(
    runId: string,
    status: 'completed' | 'failed' | 'cancelled' | 'abandoned' = 'completed',
  ): Promise<RunRow> {
    const state = await this.#runs.get(runId);
    // No reviewer may approve a call that will never run: withdraw what still waits first.
    for (const approval of await this.store.listApprovals({ run_id: runId, status: 'pending' }))
      await this.#approvals.withdraw(
        approval.id,
        `the run ended (${status}) before this approval was answered`,
      );
    await closeOpenCalls(this.#context, state);
    const now = this.#context.clock();
    await this.#context.ledger.append(runId, { type: 'run-end', status, calls: state.callIds });
    await this.store.endRun(runId, status, now);
    this.#runs.forget(runId);
    return { ...state.run, status, ended_at: now };
  }

  /**
   * Exports a run as a bundle: `callgate-bundle/3` (one batch inclusion proof, a manifest signed
   * by the log key), or with `proofs` `callgate-bundle/1` (one inclusion proof per record); with
   * openings when `openings` is set, and the run's key with `openings` or `revealRunKeys`.
   */
  exportRun(runId: string, options: RunExportOptions = {}): Promise<AnyBundle> {
    return this.ledger.exportRun(runId, options);
  }

  /**
   * What this engine holds in memory for open run `runId` (undefined when it holds none): `rows`,
   * the call attempts not ended (or whose end is not durable yet); `keys`, the idempotency keys
   * such attempts are open under; `callIds`, the distinct call ids decided (one number each).
   * Counts of entries, for tests and monitoring: an ended call's row leaves memory.
   */
  heldCalls(runId: string): { rows: number; keys: number; callIds: number } | undefined {
    const state = this.#runs.held(runId);
    return state && { rows: state.heldRows, keys: state.heldKeys, callIds: state.callIds };
  }

  /** The run's state for tests and adapters: its latest call attempts. */
  async runCalls(runId: string) {
    return this.store.listCalls(runId);
  }

  /** Stops timers and flushes the ledger (the store stays open; close it after). */
  async close(): Promise<void> {
    if (this.#idleTimer) clearInterval(this.#idleTimer);
    this.#approvals.close();
    await this.ledger.close();
  }
}

export type { ApprovalState, CallVerdict, Grant };
