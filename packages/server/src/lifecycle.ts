/**
 * The server's lifecycle: how many requests are being handled, whether it is draining, and a
 * signal that ends long-polls and event streams when it shuts down. A shutdown stops taking new
 * requests, aborts the waits, then lets every accepted request finish its writes.
 */
export class Lifecycle {
  readonly #shutdown = new AbortController();
  #inFlight = 0;
  #idle: (() => void)[] = [];

  /** Aborted when the server starts shutting down. */
  get signal(): AbortSignal {
    return this.#shutdown.signal;
  }

  /** True once shutdown has begun: new requests are refused with `gate-unavailable`. */
  get draining(): boolean {
    return this.#shutdown.signal.aborted;
  }

  /** Requests accepted and not yet answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Counts a request in; call the returned function once when it has been answered. */
  enter(): () => void {
    this.#inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#inFlight--;
      if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
    };
  }

  /**
   * Begins shutdown and resolves when every accepted request has been answered, or after
   * `timeoutMs` milliseconds (default 10 s), whichever comes first. Returns true when drained.
   */
  async drain(timeoutMs = 10_000): Promise<boolean> {
    if (!this.#shutdown.signal.aborted) this.#shutdown.abort();
    if (this.#inFlight === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref?.();
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
