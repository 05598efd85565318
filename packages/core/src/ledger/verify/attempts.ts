// Per-call-attempt state of the verifier's call checks, keyed by call id then attempt number:
// no key string is built per record (a 100,000-record bundle is 100,000 lookups, not 100,000
// strings for the garbage collector), and a call's first attempt, nearly every call's only one, is
// held without an array of its own, and is its call's latest value too (no second map of the
// latest value per call: only calls with other attempts have an entry in one).

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

  set(callId: string, attempt: number, value: T): void {
    const held = this.#calls.get(callId);
    if (Array.isArray(held)) {
      held[attempt] = value;
      this.#latest.set(callId, value);
      return;
    }
    if (attempt === 1) {
      this.#calls.set(callId, value);
      return;
    }
    const attempts: T[] = [];
    if (held !== undefined) attempts[1] = held;
    attempts[attempt] = value;
    this.#calls.set(callId, attempts);
    this.#latest.set(callId, value);
  }

  /** Every value, call by call, attempts in order. */
  *values(): IterableIterator<T> {
    for (const held of this.#calls.values()) {
      if (!Array.isArray(held)) yield held;
      else for (const value of held) if (value !== undefined) yield value;
    }
  }
}
