import type { ApiKeyRow, Engine, Logger, RunRow } from '@callgate/core';
import type { Gateway } from '@callgate/mcp-gateway';
import { CallgateError } from '@callgate/protocol';
import { HealthChecks } from './health.js';
import type { Lifecycle } from './lifecycle.js';

/** The meta key under which the server remembers which API key started a run. */
const ownerKey = (runId: string) => `run-owner:${runId}`;

/** Runs remembered by {@link ServerContext.runFor}, at most (the oldest is forgotten first). */
const REMEMBERED_RUNS = 10_000;

/**
 * What every route and page shares: the engine, the server's verifier key, its logger, clock
 * and lifecycle, the MCP gateway when there is one, and the run ownership rules.
 */
export class ServerContext {
  readonly engine: Engine;
  readonly publicKey: string;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly lifecycle: Lifecycle;
  /** The MCP gateway served at `/mcp`, when there is one. */
  readonly gateway: Gateway | undefined;
  /**
   * Runs and their owners as last read, by run id: a run's id, principal and owner never change,
   * so the per-request lookup is a map read instead of two store reads (each of which would also
   * commit the writes queued so far early). Its `status` may be stale: routes that act on a run
   * go through the engine, which refuses an ended run itself.
   */
  readonly #runs = new Map<string, { run: RunRow; owner: string | undefined }>();
  /** What `/v1/health` and `/v1/ready` report: add a contributor to make a check count. */
  readonly health = new HealthChecks();
  /** What is wrong with the store, or undefined when it answers (see `AppOptions.storeHealth`). */
  readonly storeHealth: (() => Promise<string | undefined>) | undefined;

  constructor(options: {
    engine: Engine;
    publicKey: string;
    logger: Logger;
    clock: () => number;
    lifecycle: Lifecycle;
    gateway?: Gateway;
    storeHealth?: () => Promise<string | undefined>;
  }) {
    this.engine = options.engine;
    this.publicKey = options.publicKey;
    this.logger = options.logger;
    this.clock = options.clock;
    this.lifecycle = options.lifecycle;
    this.gateway = options.gateway;
    this.storeHealth = options.storeHealth;
  }

  /**
   * The principal a run started by `key` acts for. An agent key always acts under its own name:
   * a run's principal is what policy rules (`run.principal`) and ownership read, so an agent
   * naming another principal could borrow that principal's permissions and runs. An admin key
   * may start a run for anyone (the agent key of that name then owns it, see {@link owns}).
   *
   * @param requested the `principal` the request named, if any.
   * @returns `requested` for an admin key, else the key's name.
   * @throws CallgateError `forbidden` when an agent key names a principal other than its own.
   */
  principalFor(key: ApiKeyRow, requested: string | undefined): string {
    if (requested === undefined) return key.name;
    if (key.role === 'admin' || requested === key.name) return requested;
    throw new CallgateError(
      'forbidden',
      `an agent key acts under its own name: start the run without principal, or with principal ${JSON.stringify(key.name)} (only an admin key may start a run for another principal)`,
      { path: 'body.principal' },
    );
  }

  /** Remembers that `keyName` started `runId` (it then owns the run besides its principal). */
  async setOwner(runId: string, keyName: string): Promise<void> {
    await this.engine.store.setMeta(ownerKey(runId), keyName);
    this.#runs.delete(runId);
  }

  /**
   * True when the key owns the run: its name is the run's principal, or it started the run.
   * Owning a run is what lets an agent key act on it and receive its grants.
   */
  async owns(key: ApiKeyRow, run: RunRow): Promise<boolean> {
    if (run.principal === key.name) return true;
    return (await this.engine.store.getMeta(ownerKey(run.run_id))) === key.name;
  }

  /**
   * The run `runId` as `key` may see it. Reviewers and admins see every run; an agent key only
   * the runs it owns. A run the key may not see is reported exactly like a missing one.
   *
   * @throws CallgateError `not-found` when there is no such run or the key may not see it.
   */
  async runFor(key: ApiKeyRow, runId: string): Promise<RunRow> {
    let known = this.#runs.get(runId);
    if (known === undefined) {
      const run = await this.engine.store.getRun(runId);
      if (!run) throw new CallgateError('not-found', `no run ${runId}`);
      known = { run, owner: await this.engine.store.getMeta(ownerKey(runId)) };
      if (run.status === 'running') {
        if (this.#runs.size >= REMEMBERED_RUNS) this.#runs.delete(this.#runs.keys().next().value as string);
        this.#runs.set(runId, known);
      }
    }
    const { run, owner } = known;
    if (key.role !== 'agent' || run.principal === key.name || owner === key.name) return run;
    throw new CallgateError('not-found', `no run ${runId}`);
  }

  /** Forgets a run's remembered row (after it ended, so its next read shows its final status). */
  forgetRun(runId: string): void {
    this.#runs.delete(runId);
  }

  /** True when `key` may receive the grant of an approval in `run` (never a reviewer's). */
  async mayHoldGrant(key: ApiKeyRow, run: RunRow): Promise<boolean> {
    if (key.role === 'admin') return true;
    return key.role === 'agent' && (await this.owns(key, run));
  }
}
