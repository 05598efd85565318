// Offline verification of a 100,000-record log's run, and bundle sizes, side by side in one run:
// record format version 1 (a log that began before version 2) and version 2 (what new logs
// write), each as `callgate-bundle/1` with per-record inclusion proofs (`export --proofs`) and as
// `callgate-bundle/3` without (the default). Rounds are interleaved; the best of 5 is printed,
// with the load average from `uptime` beside each figure. "object" times `verifyBundle` on a
// parsed bundle; "file" times `verifyBundleText` (the lossless read of the file's text included).
// "wall" is records per elapsed second; "cpu" records per CPU-second of this process (its GC
// threads included): on a machine other work shares, the closer measure of one core's rate.
// Usage: node bench/verify.mjs [--records 100000] [--rounds 5] [--write DIR]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Engine,
  generateEd25519KeyPair,
  Ledger,
  loadPolicy,
  logSignerFromPrivateKey,
  MemoryStore,
  sealRecord,
  serializeBundle,
  verifyBundle,
  verifyBundleText,
} from '@callgate/core';
import { load } from './measure.mjs';

const argument = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const target = Number(argument('--records', '100000'));
const rounds = Number(argument('--rounds', '5'));
const writeDir = argument('--write', undefined);

const POLICY =
  'version: 1\ndefault: deny\nrules:\n  - id: invoices\n    match: { tools: [send_invoice] }\n    effect: allow\n';
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
const origin = 'bench.local/log';

/** A log of `target` records (version 1 or 2), two runs interleaved; returns the ledger and the big run. */
async function buildLog(version) {
  const store = new MemoryStore();
  if (version === 1) {
    // A log that began before format version 2: a record and no arguments secret keeps it version 1.
    await store.appendRecords([
      sealRecord({
        type: 'run-start',
        principal: 'legacy',
        framework: 'bench',
        labels: {},
        prev: null,
        run_id: 'legacy',
        run_seq: 0,
        seq: 0,
        ts: 1,
        v: 1,
      }),
    ]);
  }
  const keys = generateEd25519KeyPair();
  const ledger = await Ledger.open(store, {
    signer: logSignerFromPrivateKey(origin, keys.privateKey),
    origin,
  });
  const engine = new Engine({ store, ledger, policy: loadPolicy(POLICY), tools: TOOLS });
  // Two runs interleaved, so a run's bundle is a real subset of the log.
  const runs = [await engine.startRun({ principal: 'bench', framework: 'bench' })];
  runs.push(await engine.startRun({ principal: 'other', framework: 'bench' }));
  let i = 0;
  while ((await store.ledgerSize()) < target) {
    await Promise.all(
      Array.from({ length: 100 }, (_, n) =>
        engine.decide(runs[n % 10 === 0 ? 1 : 0].run_id, [
          {
            id: `c${i++}`,
            tool: 'send_invoice',
            arguments: { to: 'acme', amount: i % 1000, memo: 'monthly' },
          },
        ]),
      ),
    );
  }
  return { engine, ledger, store, runId: runs[0].run_id };
}

const cases = [];
for (const version of [1, 2]) {
  const { engine, ledger, store, runId } = await buildLog(version);
  for (const [label, options] of [
    ['bundle/1, proofs', { proofs: true }],
    ['bundle/3', {}],
  ]) {
    const bundle = await ledger.exportRun(runId, options);
    const text = serializeBundle(bundle);
    if (writeDir)
      writeFileSync(join(writeDir, `v${version}-${options.proofs ? 'proofs' : 'plain'}.json`), text);
    cases.push({
      label: `v${version} records, ${label}`,
      size: await store.ledgerSize(),
      text,
      publicKey: bundle.public_key,
      records: bundle.records.length,
      best: { object: Number.POSITIVE_INFINITY, file: Number.POSITIVE_INFINITY },
      cpu: { object: Number.POSITIVE_INFINITY, file: Number.POSITIVE_INFINITY },
      load: { object: 0, file: 0 },
    });
  }
  await engine.close();
}

console.log(`verify, one run of a ${cases[0].size}-record log — Node ${process.version}, load ${load()}`);
/** Runs one verification, keeping the best wall and CPU times of `mode`. */
function measure(item, mode, verify) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const report = verify();
  const seconds = (performance.now() - started) / 1_000;
  const used = process.cpuUsage(cpu);
  if (!report.ok) throw new Error(`${item.label} (${mode}): ${JSON.stringify(report.failures.slice(0, 3))}`);
  if (seconds < item.best[mode]) [item.best[mode], item.load[mode]] = [seconds, load()];
  item.cpu[mode] = Math.min(item.cpu[mode], (used.user + used.system) / 1e6);
}

for (let round = 0; round < rounds; round++) {
  for (const item of cases) {
    const bundle = JSON.parse(item.text);
    measure(item, 'object', () => verifyBundle(bundle, { publicKey: item.publicKey }));
    measure(item, 'file', () => verifyBundleText(item.text, { publicKey: item.publicKey }));
  }
}
// The size baseline: the version 1 records' callgate-bundle/1 as compact JSON (its smallest form).
const baseline = cases.find((item) => item.label === 'v1 records, bundle/1, proofs');
const proofsSize = baseline ? JSON.stringify(JSON.parse(baseline.text)).length : 1;
const rate = (records, seconds) => String(Math.round(records / seconds)).padStart(9);
console.log(
  `${'bundle'.padEnd(30)}${'records'.padStart(8)}${'MB'.padStart(7)}${'÷ v1+proofs'.padStart(12)}  ${'object: wall'.padStart(12)}${'cpu'.padStart(9)}${'load'.padStart(6)}  ${'file: wall'.padStart(10)}${'cpu'.padStart(9)}${'load'.padStart(6)}`,
);
for (const item of cases) {
  console.log(
    `${item.label.padEnd(30)}${String(item.records).padStart(8)}${(item.text.length / 1e6).toFixed(1).padStart(7)}${(item.text.length / proofsSize).toFixed(2).padStart(12)}  ${rate(item.records, item.best.object).padStart(12)}${rate(item.records, item.cpu.object)}${String(item.load.object).padStart(6)}  ${rate(item.records, item.best.file).padStart(10)}${rate(item.records, item.cpu.file)}${String(item.load.file).padStart(6)}`,
  );
}
