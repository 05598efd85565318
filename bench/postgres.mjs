// The PostgreSQL store against SQLite, over HTTP, with real `callgate serve` processes: gated
// calls per second (one allowed call decided and recorded per request) with SQLite, PostgreSQL
// with 1 replica and with 3 replicas; p50/p99 of the allow path (one request at a time); how long
// an agent long-polling one replica waits after a reviewer's answer on another was acknowledged;
// and what waits on a lock in PostgreSQL while 3 replicas run (sampled from pg_stat_activity):
// only the ledger's head row should appear. Phases are interleaved (two rounds) and each figure
// carries the load average it was taken under.
//
//   npm run bench:postgres          (starts a throwaway PostgreSQL through scripts/with-postgres.sh)
//   CALLGATE_TEST_PG_URL=postgres://… node bench/postgres.mjs [--quick]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallgateClient } from '@callgate/client';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { load, machine } from './measure.mjs';

const url = process.env.CALLGATE_TEST_PG_URL;
if (!url) {
  console.error('CALLGATE_TEST_PG_URL is not set: run `npm run bench:postgres`');
  process.exit(2);
}
const quick = process.argv.includes('--quick');
const SECONDS = quick ? 2 : 5;
const CONCURRENCY = 48;
const SEQUENTIAL = quick ? 200 : 1000;
const BIN = join(import.meta.dirname, '../packages/cli/dist/bin.js');
const dispatcher = new Agent({ keepAliveTimeout: 1000, connections: 128 });
const fetchWith = (input, init) => undiciFetch(input, { ...init, dispatcher });

const CONFIG = `
host: 127.0.0.1
port: 0
policy:
  version: 1
  default: deny
  approval: { ttl: 60s, wait: 2m }
  rules:
    - { id: reads, match: { tools: ["read_*"] }, effect: allow }
    - { id: invoices, match: { tools: [send_invoice] }, effect: ask, reason: a person decides }
tools:
  - name: read_file
    inputSchema: { type: object, properties: { path: { type: string } }, required: [path] }
    annotations: { readOnlyHint: true }
  - name: send_invoice
    inputSchema: { type: object, properties: { to: { type: string }, amount: { type: number } }, required: [to, amount] }
`;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function admin(text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

function callgate(args, env = {}) {
  return execFileSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
}

/** Servers running now: stopped if the bench itself is stopped. */
const running = new Set();
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(1);
  });

/** Starts `callgate serve` and resolves with its URL and a stop function. */
function serve(dir, args) {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', join(dir, 'callgate.yaml'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
    child.stdout.on('data', () => {
      const match = /callgate serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match && output.includes('Press Ctrl+C')) {
        clearTimeout(timer);
        resolve({
          url: match[1],
          stop: () =>
            new Promise((done) => {
              child.once('exit', done);
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', () => reject(new Error(`serve exited:\n${output}`)));
  });
}

/**
 * A deployment: `kind` sqlite (one server) or postgres with `replicas` servers on a fresh
 * database; `relaxed` turns synchronous_commit off (commits acknowledged before the WAL flush).
 */
async function deploy(kind, replicas, relaxed = false) {
  const dir = mkdtempSync(join(tmpdir(), 'callgate-bench-pg-'));
  writeFileSync(join(dir, 'callgate.yaml'), CONFIG);
  let where;
  let database;
  if (kind === 'sqlite') where = ['--data', join(dir, 'data')];
  else {
    database = `bench_${Date.now().toString(36)}_${replicas}`;
    await admin(`CREATE DATABASE ${database}`);
    const own = new URL(url);
    own.pathname = `/${database}`;
    if (relaxed) own.searchParams.set('options', '-c synchronous_commit=off');
    where = ['--store', own.toString()];
  }
  const agentKey = /\b(cg_[A-Za-z0-9_-]{43})\b/.exec(
    callgate(['keys', 'create', '--role', 'agent', '--name', 'agent', ...where]),
  )[1];
  const reviewerKey = /\b(cg_[A-Za-z0-9_-]{43})\b/.exec(
    callgate(['keys', 'create', '--role', 'reviewer', '--name', 'reviewer', ...where]),
  )[1];
  const servers = [];
  for (let index = 0; index < replicas; index++) servers.push(await serve(dir, where));
  const client = (index, key) =>
    new CallgateClient({
      url: servers[index % servers.length].url,
      apiKey: key,
      timeoutMs: 60_000,
      fetch: fetchWith,
    });
  return {
    database,
    agents: servers.map((_, index) => client(index, agentKey)),
    reviewers: servers.map((_, index) => client(index, reviewerKey)),
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
      if (database) await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Gated calls per second: CONCURRENCY agents, spread over the replicas, each deciding one allowed call per request. */
async function gatedCallsPerSecond(deployment) {
  const runs = await Promise.all(
    Array.from({ length: CONCURRENCY }, (_, index) =>
      deployment.agents[index % deployment.agents.length].startRun({ framework: 'bench' }),
    ),
  );
  const deadline = performance.now() + SECONDS * 1000;
  let count = 0;
  const started = performance.now();
  await Promise.all(
    runs.map(async (run, index) => {
      const agent = deployment.agents[index % deployment.agents.length];
      let call = 0;
      while (performance.now() < deadline) {
        await agent.decide(run.run_id, [{ id: `c-${call++}`, tool: 'read_file', arguments: { path: '/a' } }]);
        count++;
      }
    }),
  );
  return Math.round((count / (performance.now() - started)) * 1000);
}

/** p50/p99 (ms) of one allowed call's decision over HTTP, one request at a time. */
async function allowPath(deployment) {
  const agent = deployment.agents[0];
  const run = await agent.startRun({ framework: 'bench-latency' });
  const samples = [];
  for (let index = 0; index < SEQUENTIAL + 100; index++) {
    const began = performance.now();
    await agent.decide(run.run_id, [{ id: `q-${index}`, tool: 'read_file', arguments: { path: '/a' } }]);
    if (index >= 100) samples.push(performance.now() - began);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** Waits (ms) after a reviewer's answer on replica 1 is acknowledged until the agent's long-poll on replica 0 returns. */
async function wakeLatency(deployment) {
  const [agent] = deployment.agents;
  const reviewer = deployment.reviewers[1 % deployment.reviewers.length];
  const samples = [];
  for (let index = 0; index < (quick ? 20 : 60); index++) {
    const run = await agent.startRun({ framework: 'bench-wake' });
    const { verdicts } = await agent.decide(run.run_id, [
      { id: 'pay', tool: 'send_invoice', arguments: { to: 'acme', amount: index } },
    ]);
    const id = verdicts[0].approval.id;
    const waiting = agent.waitForApproval(id, { timeoutMs: 30_000 }).then(() => performance.now());
    await new Promise((resolve) => setTimeout(resolve, 20));
    await reviewer.approve(id);
    const acknowledged = performance.now();
    samples.push(Math.max(0, (await waiting) - acknowledged));
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** Samples what waits on a lock in the deployment's database while `work` runs. */
async function lockWaits(database, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const seen = new Map();
  let running = true;
  const sampling = (async () => {
    while (running) {
      const { rows } = await client.query(
        `SELECT regexp_replace(left(query, 60), '\\s+', ' ', 'g') AS query FROM pg_stat_activity
         WHERE datname = $1 AND wait_event_type = 'Lock'`,
        [database],
      );
      for (const { query } of rows) seen.set(query, (seen.get(query) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const result = await work();
  running = false;
  await sampling;
  await client.end();
  return { result, seen };
}

const rows = [];
function record(name, value, target) {
  rows.push({ name, value, target, load: load() });
  console.log(
    `${name.padEnd(60)}${String(value).padStart(14)}   load ${load().toFixed(2).padStart(5)}   ${target ?? ''}`,
  );
}

const info = machine();
console.log(`callgate PostgreSQL bench: ${info.cpu}, ${info.cores} cores, Node ${info.node}, ${info.date}`);
console.log(
  `${CONCURRENCY} concurrent agents for ${SECONDS} s per throughput figure; ${SEQUENTIAL} sequential calls per latency figure`,
);
for (let round = 1; round <= 2; round++) {
  for (const [kind, replicas, relaxed] of [
    ['sqlite', 1, false],
    ['postgres', 1, false],
    ['postgres', 1, true],
    ['postgres', 3, false],
  ]) {
    const label =
      kind === 'sqlite'
        ? 'SQLite (NORMAL), 1 server'
        : `PostgreSQL (${relaxed ? 'synchronous_commit off' : 'FULL'}), ${replicas} replica${replicas > 1 ? 's' : ''}`;
    const deployment = await deploy(kind, replicas, relaxed);
    try {
      if (kind === 'postgres' && replicas === 3) {
        const { result, seen } = await lockWaits(deployment.database, () => gatedCallsPerSecond(deployment));
        record(`round ${round} ${label}: gated calls/s`, result, '≥ 1 replica');
        const waits = [...seen.entries()].sort((a, b) => b[1] - a[1]);
        console.log(
          `    lock waits sampled: ${waits.length === 0 ? 'none' : waits.map(([query, n]) => `${n}× ${query}`).join('; ')}`,
        );
      } else record(`round ${round} ${label}: gated calls/s`, await gatedCallsPerSecond(deployment));
      const { p50, p99 } = await allowPath(deployment);
      record(
        `round ${round} ${label}: allow path p50 / p99 ms`,
        `${p50.toFixed(2)} / ${p99.toFixed(2)}`,
        kind === 'postgres' ? 'p99 ≤ 5 ms' : '',
      );
      if (kind === 'postgres' && replicas === 3) {
        const wake = await wakeLatency(deployment);
        record(
          `round ${round} ${label}: answer → waiter on other replica p50 / p99 ms`,
          `${wake.p50.toFixed(1)} / ${wake.p99.toFixed(1)}`,
          'p99 < 100 ms',
        );
      }
    } finally {
      await deployment.stop();
    }
  }
}
