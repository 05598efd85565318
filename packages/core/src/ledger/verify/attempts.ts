// Per-call-attempt state of the verifier's call checks, keyed by call id then attempt number:
// no key string is built per record (a 100,000-record bundle is 100,000 lookups, not 100,000
// strings for the garbage collector), and a call's first attempt, nearly every call's only one, is
// held without an array of its own, and is its call's latest value too (no second map of the
// latest value per call: only calls with other attempts have an entry in one).
import type { LedgerRecordOf } from '@callgate/protocol';

/** Values by (call id, attempt), in insertion order of their calls. Values must not be arrays. */
export class AttemptMap<T extends object> {
  /** A call's attempt 1 alone as its value; any other attempts as an array by attempt number. */
  readonly #calls = new Map<string, T | T[]>();
  /** The value set last, of each call held as an array. */
  readonly #latest = new Map<string, T>();

  /** The value set last for `callId` (any attempt), or undefined. */
  latest(callId: string): T | undefined {
    const held = this.#calls.get(callId);
    if (held === undefined || !Array.isArray(held)) return held;
    return this.#latest.get(callId);
  }

  get(callId: string, attempt: number): T | undefined {
    const held = this.#calls.get(callId);
    if (held === undefined) return undefined;
    if (Array.isArray(held)) return held[attempt];
    return attempt === 1 ? held : undefined;
  }

  has(callId: string, attempt: number): boolean {
    return this.get(callId, attempt) !== undefined;
  }

  /** Sets the value of (`callId`, `attempt`); returns the value it replaces, or undefined. */
  set(callId: string, attempt: number, value: T): T | undefined {
    const held = this.#calls.get(callId);
    if (Array.isArray(held)) {
      const replaced = held[attempt];
      held[attempt] = value;
      this.#latest.set(callId, value);
      return replaced;
    }
    if (attempt === 1) {
      this.#calls.set(callId, value);
      return held;
    }
    const attempts: T[] = [];
    if (held !== undefined) attempts[1] = held;
    attempts[attempt] = value;
    this.#calls.set(callId, attempts);
    this.#latest.set(callId, value);
    return undefined;
  }

  /** Every value, call by call, attempts in order. */
  *values(): IterableIterator<T> {
    for (const held of this.#calls.values()) {
      if (!Array.isArray(held)) yield held;
      else for (const value of held) if (value !== undefined) yield value;
    }
  }
}

/**
 * What the call checks and the fidelity checks keep of a `call-decision`, and what happened to
 * its attempt since: one object per decided attempt, shared by both checks (each writes only its
 * own fields), so a 100,000-decision bundle is 100,000 small objects the garbage collector
 * carries, not twice that.
 */
export interface AttemptState {
  seq: number;
  call_id: string;
  attempt: number;
  tool: string;
  effect: LedgerRecordOf<'call-decision'>['effect'];
  error_kind: LedgerRecordOf<'call-decision'>['error_kind'];
  arguments_digest: string | null;
  /** Call checks: approval requests and responses for this attempt, and its executions. */
  requests: number;
  responses: number;
  /** Call checks: the approved response's arguments_digest; undefined while none approved it. */
  approved: string | null | undefined;
  executions: number;
  /** Fidelity checks: a person approved it, or denied it; its `call-end` records. */
  reviewApproved: boolean;
  reviewDenied: boolean;
  ends: number;
}

/**
 * The decided attempts of each run, by call and attempt, for the call checks and the fidelity
 * checks together: the call checks make each attempt's state ({@link CallAttempts.decide}), and
 * fidelity checks given the same records right after take the state made for the same record
 * ({@link CallAttempts.stateOf}).
 */
export class CallAttempts {
  readonly #runs = new Map<string, AttemptMap<AttemptState>>();
  /** The decision given to {@link decide} last, and the state made for it. */
  #lastDecision: object | undefined;
  #lastState: AttemptState | undefined;
  /** Whether the decision given to {@link decide} last replaced a state of the same attempt. */
  replacedAnother = false;

  /** The attempts of run `runId` (an empty map made on first use). */
  run(runId: string): AttemptMap<AttemptState> {
    let attempts = this.#runs.get(runId);
    if (attempts === undefined) {
      attempts = new AttemptMap();
      this.#runs.set(runId, attempts);
    }
    return attempts;
  }

  /** A fresh state for the decision `record`, set (replacing any) in its run's `attempts`. */
  decide(attempts: AttemptMap<AttemptState>, record: LedgerRecordOf<'call-decision'>): AttemptState {
    const state: AttemptState = {
      seq: record.seq,
      call_id: record.call_id,
      attempt: record.attempt,
      tool: record.tool,
      effect: record.effect,
      error_kind: record.error_kind,
      arguments_digest: record.arguments_digest,
      requests: 0,
      responses: 0,
      approved: undefined,
      executions: 0,
      reviewApproved: false,
      reviewDenied: false,
      ends: 0,
    };
    this.replacedAnother = attempts.set(record.call_id, record.attempt, state) !== undefined;
    this.#lastDecision = record;
    this.#lastState = state;
    return state;
  }

  /** The state {@link decide} made for `record` when it was the last decision given, else a fresh one. */
  stateOf(attempts: AttemptMap<AttemptState>, record: LedgerRecordOf<'call-decision'>): AttemptState {
    if (record === this.#lastDecision && this.#lastState !== undefined) return this.#lastState;
    return this.decide(attempts, record);
  }

  /** Each run's id and attempts, in order of the runs' first records. */
  runs(): IterableIterator<[string, AttemptMap<AttemptState>]> {
    return this.#runs.entries();
  }
}
