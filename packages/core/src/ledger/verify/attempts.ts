// Per-call-attempt state of the verifier's call checks, keyed by call id then attempt number:
// no key string is built per record (a 100,000-record bundle is 100,000 lookups, not 100,000
// strings for the garbage collector), and a call's first attempt, nearly every call's only one, is
// held without an array of its own, and is its call's latest value too (no second map of the
// latest value per call: only calls with other attempts have an entry in one).
import type { LedgerRecordOf } from '@callgate/protocol';
import { argumentsDigestSpan, SPAN } from '../record-line-reader.js';

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
  readonly arguments_digest: string | null;
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
 * An {@link AttemptState} whose `arguments_digest` is kept, when it came from a file line the
 * record-line reader was certain of, as the span of the file's bytes it is written in (the bytes
 * stay alive for the whole verification): its text is made the first time it is read, so the
 * states of a 100,000-decision bundle are not 100,000 76-character strings more for the garbage
 * collector to copy.
 */
class DecidedAttempt implements AttemptState {
  readonly seq: number;
  readonly call_id: string;
  readonly attempt: number;
  readonly tool: string;
  readonly effect: LedgerRecordOf<'call-decision'>['effect'];
  readonly error_kind: LedgerRecordOf<'call-decision'>['error_kind'];
  requests = 0;
  responses = 0;
  approved: string | null | undefined = undefined;
  executions = 0;
  reviewApproved = false;
  reviewDenied = false;
  ends = 0;
  /** The digest's text once made (or as given), and where its bytes are until then. */
  #digest: string | null | undefined;
  #bytes: Buffer | undefined;
  readonly #start: number;
  readonly #end: number;

  constructor(
    record: LedgerRecordOf<'call-decision'>,
    bytes: Buffer | undefined,
    digest: string | null | undefined,
    start: number,
    end: number,
  ) {
    this.seq = record.seq;
    this.call_id = record.call_id;
    this.attempt = record.attempt;
    this.tool = record.tool;
    this.effect = record.effect;
    this.error_kind = record.error_kind;
    this.#bytes = bytes;
    this.#digest = digest;
    this.#start = start;
    this.#end = end;
  }

  get arguments_digest(): string | null {
    const bytes = this.#bytes;
    if (bytes !== undefined) {
      this.#digest = bytes.toString('latin1', this.#start, this.#end);
      this.#bytes = undefined;
    }
    return this.#digest as string | null;
  }
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
    const bytes = argumentsDigestSpan(record);
    const state = new DecidedAttempt(
      record,
      bytes,
      bytes === undefined ? record.arguments_digest : undefined,
      SPAN[0] as number,
      SPAN[1] as number,
    );
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
