// callgate benchmarks (DESIGN §7). Run with `npm run bench`: prints a table and writes
// bench/results/latest.json (one object per figure). Targets are printed beside each figure, and
// the 1-minute load average when it was taken: on a machine busy with other work (load above its
// core count) every figure is pessimistic.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey, verifyBundle } from '@callgate/core/ledger';
import { SqliteStore } from '@callgate/store-sqlite';
import { makeBenchInputs, makeBenchPolicy } from '@callgate/testing';
import { latency, latencySync, load, machine, throughput } from './measure.mjs';

const quick = process.argv.includes('--quick');
const scale = quick ? 0.1 : 1;
const figures = [];
const info = machine();

function report(name, figure, target) {
  const row = { name, ...figure, target, load: load(), cpu: info.cpu, node: info.node, date: info.date };
  figures.push(row);
  const cell = (value) => String(value ?? '—').padStart(10);
  console.log(
    `${name.padEnd(52)}${cell(figure.p50_us)}${cell(figure.p99_us)}${cell(figure.p999_us)}${cell(figure.per_second)}${cell(row.load)}   ${target ?? ''}`,
  );
}

const POLICY = `
version: 1
default: deny
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
`;
const TOOLS = [
  {
    name: 'send_invoice',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' }, memo: { type: 'string' } },
      required: ['to', 'amount'],
    },
  },
];

async function engineOn(store) {
  const keys = generateEd25519KeyPair();
  const origin = 'bench.local/log';
  const ledger = await Ledger.open(store, {
    signer: logSignerFromPrivateKey(origin, keys.privateKey),
    origin,
  });
  const engine = new Engine({ store, ledger, policy: loadPolicy(POLICY), tools: TOOLS });
  const run = await engine.startRun({ principal: 'bench', framework: 'bench' });
  return { engine, ledger, runId: run.run_id };
}

const call = (i) => [
  { id: `c${i}`, tool: 'send_invoice', arguments: { to: 'acme', amount: i % 1000, memo: 'monthly' } },
];

console.log(
  `callgate benchmarks — ${info.cpu}, ${info.cores} cores, Node ${info.node}, load ${load()}${quick ? ' (quick)' : ''}`,
);
console.log(
  `${'figure'.padEnd(52)}${'p50 µs'.padStart(10)}${'p99 µs'.padStart(10)}${'p99.9 µs'.padStart(10)}${'per s'.padStart(10)}${'load'.padStart(10)}   target`,
);

// 1. Policy evaluation alone, 200 rules.
{
  const policy = makeBenchPolicy(200);
  const inputs = makeBenchInputs(1024);
  report(
    'policy evaluate, 200 rules',
    latencySync((i) => policy.evaluate(inputs[i % inputs.length]), { iterations: 200_000 * scale }),
    'p50 ≤ 5 µs',
  );
}

// 2. The full gate on the allow path (decide + commitment + chained append), in memory and on SQLite.
const folders = [];
for (const [label, open] of [
  ['memory', () => new MemoryStore()],
  [
    'SQLite WAL NORMAL',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'callgate-bench-'));
      folders.push(dir);
      return SqliteStore.open(join(dir, 'callgate.db'), { synchronous: 'NORMAL' });
    },
  ],
  [
    'SQLite WAL FULL',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'callgate-bench-'));
      folders.push(dir);
      return SqliteStore.open(join(dir, 'callgate.db'), { synchronous: 'FULL' });
    },
  ],
]) {
  const store = open();
  const { engine, runId } = await engineOn(store);
  const figure = await latency((i) => engine.decide(runId, call(i)), { iterations: 20_000 * scale });
  figure.per_second = await throughput((i) => engine.decide(runId, call(1e7 + i)), {
    concurrency: 64,
    seconds: quick ? 1 : 3,
  });
  report(`gate allow path: decide+commit+append (${label})`, figure, 'p50 ≤ 20 µs, p99 ≤ 100 µs, ≥ 30,000/s');
  await engine.close();
  await store.close();
}

// 3. Offline verification of a 100,000-record bundle.
{
  const store = new MemoryStore();
  const { engine, ledger, runId } = await engineOn(store);
  const target = 100_000 * scale;
  let i = 0;
  while ((await store.ledgerSize()) < target) {
    await Promise.all(Array.from({ length: 100 }, () => engine.decide(runId, call(2e7 + i++))));
  }
  const bundle = JSON.parse(JSON.stringify(await ledger.exportRun(runId, {})));
  const started = performance.now();
  const result = verifyBundle(bundle, { publicKey: bundle.public_key });
  const seconds = (performance.now() - started) / 1_000;
  if (!result.ok)
    throw new Error(`bench bundle did not verify: ${JSON.stringify(result.failures.slice(0, 3))}`);
  report(
    `verify bundle, ${bundle.records.length} records`,
    { per_second: Math.round(bundle.records.length / seconds) },
    '≥ 200,000 records/s',
  );
  await engine.close();
}

for (const dir of folders) rmSync(dir, { recursive: true, force: true });
const file = new URL('./results/latest.json', import.meta.url);
writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
console.log(`\nwrote ${file.pathname}`);
