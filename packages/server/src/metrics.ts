// Prometheus metrics at `/metrics` (text exposition format 0.0.4, by prom-client). Decisions,
// approvals, grants and appends are counted from the records the ledger makes durable, so the
// figures say what the ledger says; the rest is read when Prometheus scrapes.
import { isCallgateError, type LedgerRecord } from '@callgate/core';
import type { Context, Hono, Next } from 'hono';
import { routePath } from 'hono/route';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ServerContext } from './server-context.js';

/** Seconds buckets of request and append latency: 0.5 ms to 10 s. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
/** Seconds buckets of approval waits: 1 s to 1 day. */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 14_400, 86_400];
/** Approvals whose creation time is kept for the wait histogram (the oldest are dropped first). */
const REMEMBERED_APPROVALS = 10_000;

let processRegistry: Registry | undefined;
/**
 * prom-client's default process metrics, collected once per process (they watch the event loop
 * with a timer of their own, which one app after another must not multiply). The CPU counters are
 * callgate's own: prom-client's count from when they were made (here: the first scrape), whereas
 * Prometheus' process collector defines `process_cpu_seconds_total` as the CPU time of the whole
 * process since it started.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'callgate_' });
    registerProcessCpu(processRegistry);
  }
  return processRegistry;
}

/**
 * `callgate_process_cpu_{user_,system_,}seconds_total`: seconds of CPU the process has used since
 * it started (`process.cpuUsage()` without a previous value, µs / 1e6), read at each scrape.
 */
function registerProcessCpu(registry: Registry): void {
  const names = {
    user: 'callgate_process_cpu_user_seconds_total',
    system: 'callgate_process_cpu_system_seconds_total',
    total: 'callgate_process_cpu_seconds_total',
  } as const;
  for (const name of Object.values(names)) registry.removeSingleMetric(name);
  const counter = (name: string, help: string, seconds: (usage: NodeJS.CpuUsage) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(seconds(process.cpuUsage()));
      },
    });
  counter(
    names.user,
    'Total user CPU time spent in seconds, since the process started.',
    (usage) => usage.user / 1e6,
  );
  counter(
    names.system,
    'Total system CPU time spent in seconds, since the process started.',
    (usage) => usage.system / 1e6,
  );
  counter(
    names.total,
    'Total user and system CPU time spent in seconds, since the process started.',
    (usage) => (usage.user + usage.system) / 1e6,
  );
}

/**
 * The server's metrics, on a registry of their own (never prom-client's global one, so two apps
 * in one process do not mix). Names (all prefixed `callgate_`):
 * - `decisions_total{effect,rule,kind}`: one per matched rule of each `call-decision` (`rule=""`
 *   when none matched; `kind` is the error kind of a refusal, `""` otherwise);
 * - `approvals_pending`, `approval_oldest_pending_seconds`; `approval_wait_seconds{status}`
 *   (from request to answer);
 * - `grant_consumes_total{result="consumed"|"refused"}`: every consume through the engine (the
 *   HTTP API's and the MCP gateway's), refused meaning `grant-invalid` (unknown, spent, expired or
 *   bound to another call);
 * - `ledger_append_seconds` (from `append` to durable), `ledger_append_failures_total`,
 *   `ledger_records`, `checkpoint_lag_records`, `checkpoint_age_seconds`;
 * - `upstream_up{upstream}` (1 when connected), `upstream_tools{upstream}`;
 * - `http_request_duration_seconds{method,route,status}` (route is the matched pattern);
 * - prom-client's default process metrics.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly #stop: () => void;
  readonly #decisions: Counter<'effect' | 'rule' | 'kind'>;
  readonly #approvalWait: Histogram<'status'>;
  readonly #grants: Counter<'result'>;
  readonly #append: Histogram;
  readonly #appendFailures: Counter;
  readonly #http: Histogram<'method' | 'route' | 'status'>;
  readonly #approvalCreated = new Map<string, number>();

  constructor(server: ServerContext) {
    const registers = [this.registry];
    this.#decisions = new Counter({
      name: 'callgate_decisions_total',
      help: 'Decisions recorded, by effect, matched rule and refusal kind',
      labelNames: ['effect', 'rule', 'kind'],
      registers,
    });
    this.#approvalWait = new Histogram({
      name: 'callgate_approval_wait_seconds',
      help: 'Time from an approval request to its answer, by status',
      labelNames: ['status'],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.#grants = new Counter({
      name: 'callgate_grant_consumes_total',
      help: 'Grants consumed by calls that ran, and consumes refused (grant-invalid)',
      labelNames: ['result'],
      registers,
    });
    this.#append = new Histogram({
      name: 'callgate_ledger_append_seconds',
      help: 'Time from a ledger append to its record being durable',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#appendFailures = new Counter({
      name: 'callgate_ledger_append_failures_total',
      help: 'Ledger appends that failed',
      registers,
    });
    this.#http = new Histogram({
      name: 'callgate_http_request_duration_seconds',
      help: 'HTTP request latency, by method, matched route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const { engine } = server;
    new Gauge({
      name: 'callgate_approvals_pending',
      help: 'Approvals waiting for a person',
      registers,
      async collect() {
        this.set((await engine.store.listApprovals({ status: 'pending', limit: 1_000_000 })).length);
      },
    });
    new Gauge({
      name: 'callgate_approval_oldest_pending_seconds',
      help: 'How long the oldest pending approval has waited (0 when none)',
      registers,
      async collect() {
        const pending = await engine.store.listApprovals({ status: 'pending', limit: 1_000_000 });
        const oldest = Math.min(...pending.map((approval) => approval.created_at));
        this.set(pending.length === 0 ? 0 : Math.max(0, (server.clock() - oldest) / 1000));
      },
    });
    new Gauge({
      name: 'callgate_ledger_records',
      help: 'Records in the ledger (durable)',
      registers,
      collect() {
        this.set(engine.ledger.size);
      },
    });
    new Gauge({
      name: 'callgate_checkpoint_lag_records',
      help: 'Durable records not yet covered by a signed checkpoint',
      registers,
      collect() {
        this.set(engine.ledger.size - (engine.ledger.latestCheckpoint?.size ?? 0));
      },
    });
    new Gauge({
      name: 'callgate_checkpoint_age_seconds',
      help: 'Age of the latest signed checkpoint (0 when there is none)',
      registers,
      collect() {
        const latest = engine.ledger.latestCheckpoint;
        this.set(latest ? Math.max(0, (server.clock() - latest.ts) / 1000) : 0);
      },
    });
    new Gauge({
      name: 'callgate_upstream_up',
      help: 'Upstream MCP servers: 1 when connected, else 0',
      labelNames: ['upstream'],
      registers,
      collect() {
        this.reset();
        for (const upstream of server.gateway?.status() ?? [])
          this.set({ upstream: upstream.name }, upstream.status === 'connected' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'callgate_upstream_tools',
      help: 'Tools an upstream MCP server offers',
      labelNames: ['upstream'],
      registers,
      collect() {
        this.reset();
        for (const upstream of server.gateway?.status() ?? [])
          this.set({ upstream: upstream.name }, upstream.tools.length);
      },
    });
    // Every consume goes through `engine.consumeGrant` (HTTP API, MCP gateway): count it there.
    const consume = engine.consumeGrant;
    const grants = this.#grants;
    engine.consumeGrant = async function countedConsume(this: typeof engine, ...input) {
      try {
        const grant = await consume.apply(this, input);
        grants.inc({ result: 'consumed' });
        return grant;
      } catch (error) {
        if (isCallgateError(error) && error.kind === 'grant-invalid') grants.inc({ result: 'refused' });
        throw error;
      }
    };
    const stopObserving = engine.ledger.observeAppends(() => {
      const started = performance.now();
      return (outcome) => {
        if ('error' in outcome) {
          this.#appendFailures.inc();
          return;
        }
        this.#append.observe((performance.now() - started) / 1000);
        this.#count(outcome.record);
      };
    });
    this.#stop = () => {
      stopObserving();
      if (engine.consumeGrant !== consume) engine.consumeGrant = consume;
    };
  }

  #count(record: LedgerRecord): void {
    switch (record.type) {
      case 'call-decision': {
        const kind = record.error_kind ?? '';
        if (record.rules.length === 0) this.#decisions.inc({ effect: record.effect, rule: '', kind });
        for (const rule of record.rules) this.#decisions.inc({ effect: record.effect, rule, kind });
        break;
      }
      case 'approval-request':
        if (this.#approvalCreated.size >= REMEMBERED_APPROVALS) {
          const oldest = this.#approvalCreated.keys().next().value;
          if (oldest !== undefined) this.#approvalCreated.delete(oldest);
        }
        this.#approvalCreated.set(record.approval_id, record.ts);
        break;
      case 'approval-response': {
        const created = this.#approvalCreated.get(record.approval_id);
        this.#approvalCreated.delete(record.approval_id);
        if (created !== undefined)
          this.#approvalWait.observe({ status: record.status }, Math.max(0, (record.ts - created) / 1000));
        break;
      }
    }
  }

  /** Hono middleware timing every request (put it first). */
  readonly middleware = async (c: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const matched = routePath(c, -1);
      const route = matched === '' || matched === '*' || matched === '/*' ? '(unmatched)' : matched;
      this.#http.observe(
        { method: c.req.method, route, status: String(c.res.status) },
        (performance.now() - started) / 1000,
      );
    }
  };

  /** The text exposition of every metric (what `/metrics` answers). */
  metrics(): Promise<string> {
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }

  /** Stops observing the ledger. */
  close(): void {
    this.#stop();
  }
}

/**
 * Serves `GET /metrics` (no key: scrape it from the network you trust, or put it behind your
 * proxy) and times every request. Call before any other `app.use`.
 */
export function mountMetrics(app: Hono, server: ServerContext): ServerMetrics {
  const metrics = new ServerMetrics(server);
  app.use('*', metrics.middleware);
  app.get('/metrics', async (c) =>
    c.body(await metrics.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );
  return metrics;
}
