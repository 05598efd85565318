import { CallgateError, type ErrorKind } from '@callgate/protocol';
import type { CallRow, RunRow, Store } from '../store/store.js';
import { ProvenanceTracker } from './provenance.js';

/** The key of one call attempt in a run's maps: `call_id\u0000attempt`. */
export const attemptKey = (callId: string, attempt: number): string => `${callId}\u0000${attempt}`;

/**
 * What the gate keeps in memory for one open run: the rows of the call attempts that have not
 * ended yet, each call id's latest attempt number (for numbering retries), call counts (for
 * limits), provenance and the policy digests already snapshotted. Rebuilt from the store when a
 * run is first touched by this process, so a restarted server continues a run where it was.
 *
 * Memory per ended call is bounded: once an attempt's `call-end` and row are durable (the store
 * holds its outcome), its row and its entries in `consumed`, `inherited` and `refusalKinds` leave
 * memory; what stays is its call id's latest attempt number. Checks that need an ended attempt's
 * row (a second outcome report for it, a grant presented for it) read it back from the store
 * ({@link RunState.attempt}, {@link RunState.attemptFor}): the rare path.
 */
export class RunState {
  readonly run: RunRow;
  readonly provenance = new ProvenanceTracker();
  readonly policyDigests = new Set<string>();
  /**
   * Calls counted toward limits: all that the policy decided (not refused before the decision:
   * a call denied by the policy or blocked by its idempotency key counts).
   */
  callCount = 0;
  readonly toolCounts = new Map<string, number>();
  /** `refusal` records written for this run by this process (see refusals.ts). */
  refusals = 0;
  /**
   * Held call attempts (see {@link attemptKey}) whose grant this process consumed successfully.
   */
  readonly consumed = new Set<string>();
  /**
   * Held call attempts decided before this process loaded the run (a restart): whether their grant
   * was consumed is not known here, so an outcome's claim that it was is taken as given.
   */
  readonly inherited = new Set<string>();
  /**
   * The kind of each held refused attempt this process decided, as on its `call-decision` record
   * (`policy-denied`, `tool-args-invalid`, ...): what its outcome may claim.
   */
  readonly refusalKinds = new Map<string, ErrorKind>();
  /** Epoch ms of the last thing the agent did in this run (for the idle limit). */
  lastActivity = 0;

  readonly #store: Store;
  /** Latest attempt number of every call id of the run. */
  readonly #latest = new Map<string, number>();
  /** Rows of the attempts whose end is not durable yet, by {@link attemptKey}, in decision order. */
  readonly #held = new Map<string, CallRow>();
  /** Held attempts decided `allow` or `ask` under an idempotency key, by `tool\u0000key`. */
  readonly #underKey = new Map<string, Set<CallRow>>();

  constructor(run: RunRow, store: Store) {
    this.run = run;
    this.#store = store;
  }

  /** How many distinct call ids the run has decided (the `calls` of its `run-end`). */
  get callIds(): number {
    return this.#latest.size;
  }

  /** How many call rows this state holds in memory (attempts not ended, or ending). */
  get heldRows(): number {
    return this.#held.size;
  }

  /** How many idempotency keys have a held attempt under them. */
  get heldKeys(): number {
    return this.#underKey.size;
  }

  nextAttempt(callId: string): number {
    return (this.#latest.get(callId) ?? 0) + 1;
  }

  count(tool: string): void {
    this.callCount++;
    this.toolCounts.set(tool, (this.toolCounts.get(tool) ?? 0) + 1);
  }

  /** Holds a decided attempt's row until its end is durable (see {@link ended}). */
  remember(call: CallRow): void {
    if ((this.#latest.get(call.call_id) ?? 0) < call.attempt) this.#latest.set(call.call_id, call.attempt);
    if (call.outcome !== undefined) return;
    this.#held.set(attemptKey(call.call_id, call.attempt), call);
    if (call.idempotency_key !== undefined && (call.decision === 'allow' || call.decision === 'ask')) {
      const key = `${call.tool}\u0000${call.idempotency_key}`;
      let held = this.#underKey.get(key);
      if (held === undefined) {
        held = new Set();
        this.#underKey.set(key, held);
      }
      held.add(call);
    }
  }

  /**
   * Lets an ended attempt's row leave memory: call once its `call-end` record and its row (with
   * the outcome) are durable. Until then the row stays, so a second report sees it ended.
   */
  ended(call: CallRow): void {
    const key = attemptKey(call.call_id, call.attempt);
    if (this.#held.get(key) === call) this.#held.delete(key);
    this.consumed.delete(key);
    this.inherited.delete(key);
    this.refusalKinds.delete(key);
    this.#unkey(call);
  }

  /** Notes the kind a held attempt was refused with (its `call-decision`'s `error_kind`). */
  rememberRefusal(callId: string, attempt: number, kind: ErrorKind): void {
    const key = attemptKey(callId, attempt);
    if (this.#held.get(key)?.decision === 'refused') this.refusalKinds.set(key, kind);
  }

  /** Removes `call` from the open attempts under its idempotency key (it has ended). */
  #unkey(call: CallRow): void {
    if (call.idempotency_key === undefined) return;
    const key = `${call.tool}\u0000${call.idempotency_key}`;
    const held = this.#underKey.get(key);
    if (held?.delete(call) && held.size === 0) this.#underKey.delete(key);
  }

  /**
   * The call id of an attempt of `tool` decided `allow` or `ask` under idempotency key `key` that
   * has not ended, if any (the oldest).
   */
  openUnderKey(tool: string, key: string): string | undefined {
    const held = this.#underKey.get(`${tool}\u0000${key}`);
    if (held === undefined) return undefined;
    for (const call of held) {
      if (call.outcome === undefined) return call.call_id;
    }
    return undefined;
  }

  /** The held attempts (not ended, or whose end is not durable yet), in decision order. */
  heldAttempts(): IterableIterator<CallRow> {
    return this.#held.values();
  }

  /**
   * One attempt of a call (the given one, else the latest): its row in memory, else (an attempt
   * that ended) as the store holds it. Undefined when the run never decided it.
   * @throws whatever the store throws reading it.
   */
  async attempt(callId: string, attempt?: number): Promise<CallRow | undefined> {
    const latest = this.#latest.get(callId);
    if (latest === undefined) return undefined;
    const number = attempt ?? latest;
    if (!Number.isSafeInteger(number) || number < 1 || number > latest) return undefined;
    return this.#held.get(attemptKey(callId, number)) ?? this.#stored(callId, number, latest);
  }

  /**
   * The attempt of `callId` a grant for `argumentsDigest` is for: an open one with that digest,
   * else the latest (read back from the store when it has ended).
   * @throws whatever the store throws reading it.
   */
  async attemptFor(callId: string, argumentsDigest: string): Promise<CallRow | undefined> {
    const latest = this.#latest.get(callId);
    if (latest === undefined) return undefined;
    return (
      this.heldFor(callId, argumentsDigest) ??
      this.#held.get(attemptKey(callId, latest)) ??
      this.#stored(callId, latest, latest)
    );
  }

  /**
   * The held attempt of `callId` a grant for `argumentsDigest` is for: an open one with that
   * digest, else the latest when it is held; undefined when neither is in memory.
   */
  heldFor(callId: string, argumentsDigest: string): CallRow | undefined {
    const latest = this.#latest.get(callId);
    if (latest === undefined) return undefined;
    // The call's own attempts only (numbered up to the latest), oldest first: no scan of the
    // whole run, whose length would make each consume cost more than the last.
    for (let attempt = 1; attempt <= latest; attempt++) {
      const call = this.#held.get(attemptKey(callId, attempt));
      if (call && call.outcome === undefined && call.arguments_digest === argumentsDigest) return call;
    }
    return this.#held.get(attemptKey(callId, latest));
  }

  /** An ended attempt's row as the store holds it. */
  async #stored(callId: string, attempt: number, latest: number): Promise<CallRow | undefined> {
    const runId = this.run.run_id;
    if (attempt === latest) {
      const row = await this.#store.getCall(runId, callId);
      if (row?.attempt === attempt) return row;
    }
    for (const row of await this.#store.listCalls(runId)) {
      if (row.call_id === callId && row.attempt === attempt) return row;
    }
    return undefined;
  }
}

/**
 * The kinds a call is refused with after the policy decided it (decide.ts counts such calls
 * toward the run's limits, as it counts every call the policy allowed or asked about); a call
 * refused before (unknown tool, invalid arguments, a guardrail, a limit) is not counted.
 */
const REFUSED_AFTER_THE_POLICY: ReadonlySet<ErrorKind> = new Set(['policy-denied', 'idempotency-blocked']);

/** The open runs of one engine. */
export class RunStates {
  readonly #store: Store;
  readonly #states = new Map<string, RunState>();
  readonly #loading = new Map<string, Promise<RunState>>();

  constructor(store: Store) {
    this.#store = store;
  }

  add(run: RunRow): RunState {
    const state = new RunState(run, this.#store);
    this.#states.set(run.run_id, state);
    return state;
  }

  /**
   * The state of an open run.
   * @throws CallgateError `not-found` for an unknown run, `conflict` for a run that has ended.
   */
  async get(runId: string): Promise<RunState> {
    const cached = this.#states.get(runId);
    if (cached) return cached;
    let loading = this.#loading.get(runId);
    if (!loading) {
      loading = this.#load(runId).finally(() => this.#loading.delete(runId));
      this.#loading.set(runId, loading);
    }
    return loading;
  }

  /** The state of run `runId` when this process holds it in memory (no store read). */
  held(runId: string): RunState | undefined {
    return this.#states.get(runId);
  }

  forget(runId: string): void {
    this.#states.delete(runId);
  }

  /** The open runs this process holds in memory. */
  open(): RunState[] {
    return [...this.#states.values()];
  }

  async #load(runId: string): Promise<RunState> {
    const run = await this.#store.getRun(runId);
    if (!run) throw new CallgateError('not-found', `no run ${runId}`);
    if (run.status !== 'running')
      throw new CallgateError('conflict', `run ${runId} has ended (${run.status})`);
    const state = new RunState(run, this.#store);
    for (const call of await this.#store.listCalls(runId)) {
      state.remember(call);
      if (call.outcome === undefined) state.inherited.add(attemptKey(call.call_id, call.attempt));
    }
    for (const record of await this.#store.readRunRecords(runId)) {
      if (record.type === 'policy-snapshot') state.policyDigests.add(record.policy_digest);
      else if (record.type === 'refusal') state.refusals++;
      else if (record.type === 'call-decision') {
        // Counted as the gate counts while deciding: every call the policy was asked about.
        if (record.error_kind === undefined || REFUSED_AFTER_THE_POLICY.has(record.error_kind))
          state.count(record.tool);
        // What a refused attempt's outcome may claim, as when this process decided it.
        if (record.error_kind !== undefined)
          state.rememberRefusal(record.call_id, record.attempt, record.error_kind);
      }
    }
    this.#states.set(runId, state);
    return state;
  }
}
