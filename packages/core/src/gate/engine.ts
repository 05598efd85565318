import type {
  AnyBundle,
  Approval,
  ApprovalResponse,
  ErrorKind,
  Grant,
  Outcome,
  StoredGrant,
  ToolCall,
  ToolSpec,
} from '@callgate/protocol';
import type { ApprovalPort } from '../approvals/port.js';
import { canonicalJson } from '../json/canonical.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '../json/safe-json.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Policy } from '../policy/index.js';
import type { ApprovalQuery, RunRow, Store } from '../store/store.js';
import type { ApprovalChannel } from './approval-channel.js';
import { ApprovalCoordinator, type ApprovalState } from './approvals.js';
import { commitValue, type GateContext } from './context.js';
import { type CallVerdict, decideCalls, type ModelMessage } from './decide.js';
import { consumeGrant, type GrantBinding, issueConsumedGrants, issueGrant } from './grants.js';
import { type GuardrailOptions, Guardrails } from './guardrails.js';
import { uuidv7 } from './ids.js';
import { type Logger, silentLogger } from './logger.js';
import { type CallOutcomeReport, closeOpenCalls, recordOutcome } from './outcomes.js';
import { ToolRegistry } from './registry.js';
import { RunStates } from './run-state.js';

/** Options of {@link Engine}. */
export interface EngineOptions {
  store: Store;
  /** The ledger records are written to (open it on the same store). */
  ledger: Ledger;
  policy: Policy;
  /** The tools calls may name; more can be added with `engine.registry.add`. */
  tools?: Iterable<ToolSpec>;
  /** Where approvals are routed, besides the engine's own API. */
  approvalPorts?: ApprovalPort[];
  /**
   * How engines sharing the store (server replicas) hear of each other's approvals: an answer
   * received by one wakes the waiter on another. Default: none (approvals live in this process).
   */
  approvalChannel?: ApprovalChannel;
  /** Keep content (arguments, results, messages) beside the records as openings. Default false. */
  vault?: boolean;
  /** Size and depth limits on arguments. Default 1 MiB, depth 64. */
  jsonLimits?: Partial<JsonLimits>;
  guardrails?: GuardrailOptions;
  /** Epoch ms. Default `Date.now`. */
  clock?: () => number;
  logger?: Logger;
}

/** What starts a run. */
export interface RunStart {
  principal: string;
  framework: string;
  labels?: Record<string, string>;
  parent_run_id?: string;
}

/** Options of {@link Engine.decide}. */
export interface DecideOptions {
  /** The model message that asked for these calls; recorded (committed) before the decisions. */
  message?: ModelMessage;
  /** Issue a one-use grant for each allowed call (for callers that run the tool elsewhere). */
  issueGrants?: boolean;
  /**
   * Consume the grant of each allowed call with its decision (for callers that run the tool
   * themselves, right after): `true` for every call, or one flag per call, in order. Implies
   * `issueGrants` for those calls; their verdicts say `grant_consumed: true`.
   */
  consumeGrants?: boolean | readonly boolean[];
}

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

  constructor(options: EngineOptions) {
    this.registry = new ToolRegistry(options.tools ?? []);
    this.store = options.store;
    this.ledger = options.ledger;
    this.#policy = options.policy;
    this.#context = {
      store: options.store,
      ledger: options.ledger,
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
    this.#runs.add(run);
    await this.ledger.append(run.run_id, {
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
    const state = await this.#runs.get(runId);
    await this.#rememberPolicy(this.#policy);
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
            alsoWrite: async (decided) => {
              const now = this.#context.clock();
              const allowed = (verdict: CallVerdict) =>
                verdict.status === 'allowed' && verdict.arguments_digest;
              const spent = decided.filter((verdict, index) => allowed(verdict) && consumes(index));
              const kept = options.issueGrants
                ? decided.filter((verdict, index) => allowed(verdict) && !consumes(index))
                : [];
              const [consumed, issued] = await Promise.all([
                spent.length === 0
                  ? []
                  : issueConsumedGrants(
                      this.store,
                      spent.map((verdict) => bindingOf(runId, verdict)),
                      ttlMs,
                      now,
                    ),
                Promise.all(
                  kept.map((verdict) => issueGrant(this.store, bindingOf(runId, verdict), ttlMs, now)),
                ),
              ]);
              spent.forEach((verdict, index) => {
                verdict.grant = consumed[index] as Grant;
                verdict.grant_consumed = true;
              });
              kept.forEach((verdict, index) => {
                verdict.grant = issued[index] as Grant;
              });
            },
          }
        : {}),
    });
    return verdicts;
  }

  /**
   * Records a model message that asked for no tool calls (e.g. the final answer). Its content
   * is committed (kept in the vault when the vault is on), never stored in the ledger.
   */
  async recordMessage(runId: string, message: ModelMessage): Promise<void> {
    await this.#runs.get(runId);
    const writes: Promise<unknown>[] = [];
    const content =
      message.content === undefined ? null : commitValue(this.#context, message.content, writes);
    writes.push(
      this.ledger.append(runId, {
        type: 'model-message',
        role: message.role,
        content_commitment: content,
        tool_calls: [],
      }),
    );
    await Promise.all(writes);
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
    await this.#runs.get(runId);
    await this.ledger.append(runId, { type: 'gap', ...gap });
  }

  /**
   * Records an MCP request passed through to an upstream that is not a tool call (resources,
   * prompts, completions, logging). Parameters and result are committed, never stored.
   */
  async recordExchange(
    runId: string,
    exchange: {
      method: string;
      upstream: string;
      target?: string | null;
      params: unknown;
      result?: unknown;
      error_kind?: ErrorKind;
    },
  ): Promise<void> {
    await this.#runs.get(runId);
    const writes: Promise<unknown>[] = [];
    writes.push(
      this.ledger.append(runId, {
        type: 'mcp-exchange',
        method: exchange.method,
        upstream: exchange.upstream,
        target: exchange.target ?? null,
        params_commitment: commitValue(this.#context, exchange.params ?? null, writes),
        result_commitment:
          exchange.result === undefined ? null : commitValue(this.#context, exchange.result, writes),
        ...(exchange.error_kind ? { error_kind: exchange.error_kind } : {}),
      }),
    );
    await Promise.all(writes);
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

  /** Answers a pending approval (see {@link ApprovalCoordinator.respond}). */
  respondToApproval(approvalId: string, response: ApprovalResponse): Promise<ApprovalState> {
    return this.#approvals.respond(approvalId, response);
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
   * Consumes a grant for exactly this call: atomically, once.
   * @throws CallgateError `grant-invalid` on any mismatch, reuse or expiry.
   */
  consumeGrant(token: string, binding: GrantBinding): Promise<StoredGrant> {
    return consumeGrant(this.store, token, binding, this.#context.clock());
  }

  /**
   * Finds and consumes an outstanding grant for `tool` and `arguments_digest` (optionally in one
   * run, and only in runs whose principal is `principal`): how a gateway honours a call a hook
   * already decided, so a person is never asked twice. Returns undefined when none is
   * outstanding.
   */
  async consumeOutstandingGrant(query: {
    tool: string;
    arguments_digest: string;
    run_id?: string;
    principal?: string;
  }): Promise<StoredGrant | undefined> {
    const { principal, ...find } = query;
    const now = this.#context.clock();
    const principalOf = new Map<string, string | undefined>();
    for (const grant of await this.store.findGrants({ ...find, now })) {
      if (principal !== undefined) {
        if (!principalOf.has(grant.run_id))
          principalOf.set(grant.run_id, (await this.store.getRun(grant.run_id))?.principal);
        if (principalOf.get(grant.run_id) !== principal) continue;
      }
      const consumed = await this.store.consumeGrant(grant.token_hash, now);
      if (consumed) return consumed;
    }
    return undefined;
  }

  /** Records how a call ended. See {@link recordOutcome}. */
  async recordOutcome(runId: string, report: CallOutcomeReport): Promise<Outcome> {
    return recordOutcome(this.#context, await this.#runs.get(runId), report);
  }

  /**
   * Ends a run: calls decided but never completed are recorded as `decided-not-completed`
   * (asks never approved as `denied`), then `run-end`.
   */
  async endRun(runId: string, status: 'completed' | 'failed' | 'cancelled' = 'completed'): Promise<RunRow> {
    const state = await this.#runs.get(runId);
    await closeOpenCalls(this.#context, state);
    const now = this.#context.clock();
    await this.ledger.append(runId, { type: 'run-end', status, calls: state.calls.size });
    await this.store.endRun(runId, status, now);
    this.#runs.forget(runId);
    return { ...state.run, status, ended_at: now };
  }

  /**
   * Exports a run as a bundle: `callgate-bundle/2` (one batch inclusion proof), or with `proofs`
   * `callgate-bundle/1` (one inclusion proof per record); with openings when `openings` is set.
   */
  exportRun(runId: string, options: { openings?: boolean; proofs?: boolean } = {}): Promise<AnyBundle> {
    return this.ledger.exportRun(runId, options);
  }

  /** The run's state for tests and adapters: its latest call attempts. */
  async runCalls(runId: string) {
    return this.store.listCalls(runId);
  }

  /** Stops timers and flushes the ledger (the store stays open; close it after). */
  async close(): Promise<void> {
    this.#approvals.close();
    await this.ledger.close();
  }
}

export function bindingOf(runId: string, verdict: CallVerdict): GrantBinding {
  return {
    run_id: runId,
    call_id: verdict.call_id,
    tool: verdict.tool,
    arguments_digest: verdict.arguments_digest ?? '',
  };
}

export type { ApprovalState, CallVerdict, Grant };
