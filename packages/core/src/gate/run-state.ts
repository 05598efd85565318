import { CallgateError, type ErrorKind } from '@callgate/protocol';
import type { CallRow, RunRow, Store } from '../store/store.js';
import { ProvenanceTracker } from './provenance.js';

/**
 * What the gate keeps in memory for one open run: call attempts, call counts (for limits),
 * provenance and the policy digests already snapshotted. Rebuilt from the store when a run is
 * first touched by this process, so a restarted server continues a run where it was.
 */
export class RunState {
  readonly run: RunRow;
  readonly provenance = new ProvenanceTracker();
  readonly policyDigests = new Set<string>();
  /** Latest attempt of each call id: its row. */
  readonly calls = new Map<string, CallRow>();
  /** Calls counted toward limits: all that were decided (not refused before the decision). */
  callCount = 0;
  readonly toolCounts = new Map<string, number>();
  /** `refusal` records written for this run by this process (see refusals.ts). */
  refusals = 0;
  /** Call attempts (`call_id\u0000attempt`) whose grant this process consumed successfully. */
  readonly consumed = new Set<string>();
  /**
   * Call attempts decided before this process loaded the run (a restart): whether their grant was
   * consumed is not known here, so an outcome's claim that it was is taken as given.
   */
  readonly inherited = new Set<string>();
  /**
   * The kind of each refused attempt (`call_id\u0000attempt`) this process decided, as on its
   * `call-decision` record (`policy-denied`, `tool-args-invalid`, ...): what its outcome may claim.
   */
  readonly refusalKinds = new Map<string, ErrorKind>();
  /** Epoch ms of the last thing the agent did in this run (for the idle limit). */
  lastActivity = 0;

  constructor(run: RunRow) {
    this.run = run;
  }

  nextAttempt(callId: string): number {
    return (this.calls.get(callId)?.attempt ?? 0) + 1;
  }

  count(tool: string): void {
    this.callCount++;
    this.toolCounts.set(tool, (this.toolCounts.get(tool) ?? 0) + 1);
  }

  /** Every attempt of every call (`call_id\u0000attempt`): a call id given twice in one step has two. */
  readonly attempts = new Map<string, CallRow>();

  remember(call: CallRow): void {
    const known = this.calls.get(call.call_id);
    if (!known || known.attempt <= call.attempt) this.calls.set(call.call_id, call);
    this.attempts.set(`${call.call_id}\u0000${call.attempt}`, call);
  }

  /** One attempt of a call: the given one, else the latest. */
  attempt(callId: string, attempt?: number): CallRow | undefined {
    return attempt === undefined ? this.calls.get(callId) : this.attempts.get(`${callId}\u0000${attempt}`);
  }

  /**
   * The attempt of `callId` a grant for `argumentsDigest` is for: an open one with that digest,
   * else the latest.
   */
  attemptFor(callId: string, argumentsDigest: string): CallRow | undefined {
    const latest = this.calls.get(callId);
    if (latest === undefined) return undefined;
    // The call's own attempts only (numbered up to the latest), oldest first: no scan of the
    // whole run, whose length would make each consume cost more than the last.
    for (let attempt = 1; attempt <= latest.attempt; attempt++) {
      const call = this.attempts.get(`${callId}\u0000${attempt}`);
      if (call && call.outcome === undefined && call.arguments_digest === argumentsDigest) return call;
    }
    return latest;
  }
}

/** The open runs of one engine. */
export class RunStates {
  readonly #store: Store;
  readonly #states = new Map<string, RunState>();
  readonly #loading = new Map<string, Promise<RunState>>();

  constructor(store: Store) {
    this.#store = store;
  }

  add(run: RunRow): RunState {
    const state = new RunState(run);
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
    const state = new RunState(run);
    for (const call of await this.#store.listCalls(runId)) {
      state.remember(call);
      state.inherited.add(`${call.call_id}\u0000${call.attempt}`);
      if (call.decision !== 'refused') state.count(call.tool);
    }
    for (const record of await this.#store.readRunRecords(runId)) {
      if (record.type === 'policy-snapshot') state.policyDigests.add(record.policy_digest);
      else if (record.type === 'refusal') state.refusals++;
    }
    this.#states.set(runId, state);
    return state;
  }
}
