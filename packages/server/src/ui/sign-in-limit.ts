// Sign-in attempts per client address: a fixed window per address, kept for a bounded number of
// addresses (the least recently seen go first), so guessing keys through the sign-in form is slow
// and the limiter's own memory is bounded.

/** Options of {@link SignInLimiter}; durations in ms. */
export interface SignInLimiterOptions {
  clock: () => number;
  /** Attempts an address may make per window. Default 10. */
  attempts?: number;
  /** The window. Default 60,000 (one minute). */
  windowMs?: number;
  /** Addresses tracked at most. Default 10,000. */
  maxAddresses?: number;
}

/** Counts sign-in attempts per address. */
export class SignInLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  readonly #clock: () => number;
  readonly #attempts: number;
  readonly #windowMs: number;
  readonly #maxAddresses: number;

  constructor(options: SignInLimiterOptions) {
    this.#clock = options.clock;
    this.#attempts = options.attempts ?? 10;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxAddresses = options.maxAddresses ?? 10_000;
  }

  /**
   * Counts one attempt from `address`.
   * @returns `undefined` when allowed, else the whole seconds until the address may try again.
   */
  attempt(address: string): number | undefined {
    const now = this.#clock();
    let window = this.#windows.get(address);
    if (!window || now - window.start >= this.#windowMs) window = { start: now, count: 0 };
    this.#windows.delete(address);
    this.#windows.set(address, window);
    if (this.#windows.size > this.#maxAddresses) {
      const oldest = this.#windows.keys().next().value;
      if (oldest !== undefined) this.#windows.delete(oldest);
    }
    window.count += 1;
    if (window.count <= this.#attempts) return undefined;
    return Math.max(1, Math.ceil((window.start + this.#windowMs - now) / 1000));
  }
}
