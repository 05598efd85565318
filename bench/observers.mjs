// What observing the ledger costs the gate: the same in-process decision (decide + commitment +
// chained append, SQLite WAL NORMAL) on an engine alone and on one fronted by a server app (whose
// Prometheus metrics and health checks observe every append), and with OpenTelemetry tracing on
// too (SDK installed, spans to an in-memory exporter). Rounds are interleaved so that the load of
// the shared machine falls on all alike. Run: `npm run build --silent && node bench/observers.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, loadPolicy } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { createApp } from '@callgate/server';
import { SqliteStore } from '@callgate/store-sqlite';
import { BatchSpanProcessor, InMemorySpanExporter, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { latency, load, machine } from './measure.mjs';

const POLICY =
  'version: 1\ndefault: deny\nrules:\n  - id: invoices\n    match: { tools: [send_invoice] }\n    effect: allow\n';
const TOOLS = [
  { name: 'send_invoice', inputSchema: { type: 'object', properties: { to: { type: 'string' } } } },
];
const folders = [];

async function engine() {
  const dir = mkdtempSync(join(tmpdir(), 'callgate-bench-observers-'));
  folders.push(dir);
  const store = SqliteStore.open(join(dir, 'callgate.db'), { synchronous: 'NORMAL' });
  const signer = logSignerFromPrivateKey('bench.local/log', generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin: 'bench.local/log' });
  const made = new Engine({ store, ledger, policy: loadPolicy(POLICY), tools: TOOLS });
  const run = await made.startRun({ principal: 'bench', framework: 'bench' });
  return { engine: made, runId: run.run_id, publicKey: signer.verifierKey };
}

const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new InMemorySpanExporter())],
});
provider.register();
const plain = await engine();
const observed = await engine();
createApp({ engine: observed.engine, publicKey: observed.publicKey });
const traced = await engine();
createApp({
  engine: traced.engine,
  publicKey: traced.publicKey,
  tracing: { tracer: provider.getTracer('bench') },
});

const info = machine();
console.log(`observing the ledger — ${info.cpu}, ${info.cores} cores, Node ${info.node}, load ${load()}`);
const rounds = { plain: [], 'metrics + health': [], 'metrics + health + traces': [] };
let id = 0;
for (let round = 0; round < 5; round += 1) {
  for (const [label, subject] of [
    ['plain', plain],
    ['metrics + health', observed],
    ['metrics + health + traces', traced],
  ]) {
    const figure = await latency(
      () => {
        id += 1;
        return subject.engine.decide(subject.runId, [
          { id: `c${id}`, tool: 'send_invoice', arguments: { to: 'acme' } },
        ]);
      },
      { iterations: 4_000, warmup: 500 },
    );
    rounds[label].push(figure);
  }
}
const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [label, figures] of Object.entries(rounds)) {
  console.log(
    `${label.padEnd(28)} p50 ${String(median(figures.map((f) => f.p50_us))).padStart(6)} µs   p99 ${String(median(figures.map((f) => f.p99_us))).padStart(6)} µs   (median of 5 interleaved rounds)   load ${load()}`,
  );
}
await provider.shutdown();
for (const subject of [plain, observed, traced]) await subject.engine.close();
for (const dir of folders) rmSync(dir, { recursive: true, force: true });
