// Per-call-attempt state of the verifier's call checks, keyed by call id then attempt number:
// no key string is built per record (a 100,000-record bundle is 100,000 lookups, not 100,000
// strings for the garbage collector).

/** Values by (call id, attempt), in insertion order of their calls. */
export class AttemptMap<T> {
  readonly #calls = new Map<string, T[]>();

  get(callId: string, attempt: number): T | undefined {
    return this.#calls.get(callId)?.[attempt];
  }

  has(callId: string, attempt: number): boolean {
    return this.get(callId, attempt) !== undefined;
  }

  set(callId: string, attempt: number, value: T): void {
    let attempts = this.#calls.get(callId);
    if (attempts === undefined) {
      attempts = [];
      this.#calls.set(callId, attempts);
    }
    attempts[attempt] = value;
  }

  /** Every value, call by call, attempts in order. */
  *values(): IterableIterator<T> {
    for (const attempts of this.#calls.values())
      for (const value of attempts) if (value !== undefined) yield value;
  }
}
