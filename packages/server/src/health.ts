// Health and readiness: what `/v1/health` reports and `/v1/ready` acts on. Health is made of
// contributors — small checks that each say what is wrong, if anything (an upstream down, the
// store unwritable, the disk nearly full, the last ledger append failed). Any problem makes the
// server `degraded`, and a degraded or draining server is not ready (503).
import { statfs } from 'node:fs/promises';
import type { Ledger } from '@callgate/core/ledger';

/** One thing wrong, as health reports it. */
export interface HealthProblem {
  /** The contributor's name (`upstreams`, `store`, `disk`, `ledger`, …). */
  check: string;
  /** What is wrong, for a person (`upstream files is disconnected`). */
  message: string;
}

/**
 * A health check. `check` resolves with the problems it sees (none: healthy). It should answer
 * within about a second; one that throws or takes longer than {@link CHECK_TIMEOUT_MS} counts as
 * a problem of its own.
 */
export interface HealthContributor {
  readonly name: string;
  check(): Promise<readonly string[]> | readonly string[];
}

/** How long one contributor may take, ms. */
export const CHECK_TIMEOUT_MS = 2_000;

/** The contributors of one server; others (store fault detection, …) add theirs with `add`. */
export class HealthChecks {
  #contributors: HealthContributor[] = [];

  /** Adds a contributor; returns the function that removes it. */
  add(contributor: HealthContributor): () => void {
    this.#contributors = [...this.#contributors, contributor];
    return () => {
      this.#contributors = this.#contributors.filter((other) => other !== contributor);
    };
  }

  /** The names of the contributors, in the order they run. */
  get names(): string[] {
    return this.#contributors.map((contributor) => contributor.name);
  }

  /** Runs every contributor at once; resolves with every problem found, in contributor order. */
  async problems(): Promise<HealthProblem[]> {
    const results = await Promise.all(this.#contributors.map((contributor) => runCheck(contributor)));
    return results.flat();
  }
}

async function runCheck(contributor: HealthContributor): Promise<HealthProblem[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([`did not answer within ${CHECK_TIMEOUT_MS} ms`]), CHECK_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const messages = await Promise.race([Promise.resolve().then(() => contributor.check()), timeout]);
    return messages.map((message) => ({ check: contributor.name, message }));
  } catch (error) {
    return [
      { check: contributor.name, message: `check failed: ${(error as Error)?.message ?? String(error)}` },
    ];
  } finally {
    clearTimeout(timer);
  }
}

/** Upstream MCP servers that are down (disconnected, or closed while the server is not shutting down). */
export function upstreamsContributor(
  status: () => readonly { name: string; status: string }[],
  draining: () => boolean,
): HealthContributor {
  return {
    name: 'upstreams',
    check: () =>
      status()
        .filter(
          (upstream) => upstream.status === 'disconnected' || (upstream.status === 'closed' && !draining()),
        )
        .map((upstream) => `upstream ${upstream.name} is ${upstream.status}`),
  };
}

/**
 * The store takes a write: a meta key is written (at most once per `everyMs`, the last answer is
 * reused in between). A store that refuses or hangs makes the server degraded.
 */
export function storeWritableContributor(
  write: (value: string) => Promise<void>,
  clock: () => number,
  everyMs = 1_000,
): HealthContributor {
  let last: { at: number; messages: string[] } | undefined;
  return {
    name: 'store',
    async check() {
      const now = clock();
      if (last && now - last.at < everyMs) return last.messages;
      let messages: string[];
      try {
        await write(String(now));
        messages = [];
      } catch (error) {
        messages = [`the store refuses writes: ${(error as Error)?.message ?? String(error)}`];
      }
      last = { at: now, messages };
      return messages;
    },
  };
}

/**
 * The disk that holds `dir` has room: at least `minimumBytes` free (default 64 MiB) and, when
 * given, at least `minimumRatio` of it (default 0: a large disk may run with a few % free).
 */
export function diskContributor(
  dir: string,
  options: { minimumBytes?: number; minimumRatio?: number; statfs?: typeof statfs } = {},
): HealthContributor {
  const minimumBytes = options.minimumBytes ?? 64 * 1024 * 1024;
  const minimumRatio = options.minimumRatio ?? 0;
  const read = options.statfs ?? statfs;
  return {
    name: 'disk',
    async check() {
      const stats = await read(dir);
      const free = stats.bavail * stats.bsize;
      const total = stats.blocks * stats.bsize;
      if (free < minimumBytes || (total > 0 && free / total < minimumRatio))
        return [`the disk holding ${dir} is nearly full: ${(free / 1024 / 1024).toFixed(1)} MiB free`];
      return [];
    },
  };
}

/** The ledger's last append failed (within `windowMs`, default 60 s): records may not be durable. */
export function ledgerContributor(
  lastFailure: () => { at: number; message: string } | undefined,
  clock: () => number,
  windowMs = 60_000,
): HealthContributor {
  return {
    name: 'ledger',
    check() {
      const failure = lastFailure();
      if (!failure || clock() - failure.at > windowMs) return [];
      return [
        `a ledger append failed ${Math.round((clock() - failure.at) / 1000)} s ago: ${failure.message}`,
      ];
    },
  };
}

/**
 * Adds the server's own contributors: upstreams (when there is a gateway), store writable, disk
 * (when the data folder is known) and ledger appends. Returns the function that removes them.
 */
export function addServerHealth(
  server: {
    health: HealthChecks;
    engine: {
      store: { setMeta(key: string, value: string): Promise<void> };
      ledger: Pick<Ledger, 'observeAppends'>;
    };
    gateway?: { status(): readonly { name: string; status: string }[] } | undefined;
    lifecycle: { draining: boolean };
    clock: () => number;
  },
  options: { dataDir?: string } = {},
): () => void {
  let failure: { at: number; message: string } | undefined;
  const stopObserving = server.engine.ledger.observeAppends(() => (outcome) => {
    failure =
      'error' in outcome
        ? { at: server.clock(), message: (outcome.error as Error)?.message ?? String(outcome.error) }
        : undefined;
  });
  const { gateway } = server;
  const removers = [
    ...(gateway
      ? [
          server.health.add(
            upstreamsContributor(
              () => gateway.status(),
              () => server.lifecycle.draining,
            ),
          ),
        ]
      : []),
    server.health.add(
      storeWritableContributor((value) => server.engine.store.setMeta('health:probe', value), server.clock),
    ),
    ...(options.dataDir ? [server.health.add(diskContributor(options.dataDir))] : []),
    server.health.add(ledgerContributor(() => failure, server.clock)),
  ];
  return () => {
    stopObserving();
    for (const remove of removers) remove();
  };
}
