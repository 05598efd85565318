// Offline verification of a 100,000-record log's run, and bundle sizes, side by side in one run:
// record format version 1 (a log that began before version 2) and version 2 (what new logs
// write), each as `callgate-bundle/1` with per-record inclusion proofs (`export --proofs`) and as
// `callgate-bundle/3` without (the default). Rounds are interleaved; the best of 5 is printed,
// with the load average from `uptime` beside each figure. "object" times `verifyBundle` on a
// parsed bundle; "file" times `verifyBundleText` of the file's bytes (decoding and the lossless
// read of its text included).
// "wall" is records per elapsed second; "cpu" records per CPU-second of this process (its GC
// threads included): on a machine other work shares, the closer measure of one core's rate.
// With `--baseline DIR` (another build's `packages/core`, e.g. main's `dist` copied aside before a
// change), each verification is also run by that build, interleaved with this one's, and the
// ratio new ÷ baseline of records per CPU-second is printed. `--write DIR` keeps the bundle files,
// `--read DIR` verifies such files instead of building the log again.
// Usage: node bench/verify.mjs [--records 100000] [--rounds 5] [--write DIR] [--read DIR]
//   [--baseline DIR [--baseline-text]] [--only v2-plain]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import {
  Ledger,
  logSignerFromPrivateKey,
  sealRecord,
  serializeBundle,
  verifyBundle,
  verifyBundleText,
} from '@callgate/core/ledger';
import { load } from './measure.mjs';

const argument = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const target = Number(argument('--records', '100000'));
const rounds = Number(argument('--rounds', '5'));
const writeDir = argument('--write', undefined);
const readDir = argument('--read', undefined);
const baselineDir = argument('--baseline', undefined);
const only = argument('--only', undefined);
const baselineText = process.argv.includes('--baseline-text');
/** The baseline build's verifier, when one is given. */
const baseline =
  baselineDir === undefined
    ? undefined
    : await import(pathToFileURL(resolve(baselineDir, 'dist/api/ledger.js')).href);

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
/** A case for the table: `text` a bundle file's text; `size` the log's size. */
function addCase(label, size, text) {
  const header = JSON.parse(`${text.slice(0, text.indexOf('\n')).replace(/,"records":\[$/, '')}}`);
  cases.push({
    label,
    size,
    text,
    bytes: Buffer.from(text, 'utf8'),
    publicKey: header.public_key,
    records: text.split('\n').length - 3,
    best: { object: Number.POSITIVE_INFINITY, file: Number.POSITIVE_INFINITY },
    cpu: {},
    load: { object: 0, file: 0 },
  });
}
const NAMES = ['v1-proofs', 'v1-plain', 'v2-proofs', 'v2-plain'];
const wanted = (name) => only === undefined || only.split(',').includes(name);
const LABELS = {
  'v1-proofs': 'v1 records, bundle/1, proofs',
  'v1-plain': 'v1 records, bundle/3',
  'v2-proofs': 'v2 records, bundle/1, proofs',
  'v2-plain': 'v2 records, bundle/3',
};
if (readDir !== undefined) {
  for (const name of NAMES) {
    const path = join(readDir, `${name}.json`);
    if (wanted(name) && existsSync(path)) addCase(LABELS[name], undefined, readFileSync(path, 'utf8'));
  }
}
for (const version of readDir === undefined ? [1, 2] : []) {
  const { engine, ledger, store, runId } = await buildLog(version);
  for (const [label, options] of [
    ['bundle/1, proofs', { proofs: true }],
    ['bundle/3', {}],
  ]) {
    const name = `v${version}-${options.proofs ? 'proofs' : 'plain'}`;
    if (!wanted(name)) continue;
    const bundle = await ledger.exportRun(runId, options);
    const text = serializeBundle(bundle);
    if (writeDir) writeFileSync(join(writeDir, `${name}.json`), text);
    addCase(`v${version} records, ${label}`, await store.ledgerSize(), text);
  }
  await engine.close();
}

console.log(
  `verify, one run of a ${cases[0]?.size ?? '(read)'}-record log — Node ${process.version}, load ${load()}${baseline ? `, baseline ${baselineDir}` : ''}`,
);
/** Runs one verification, keeping the best wall and CPU times of `mode` (CPU also of `mode`-baseline). */
function measure(item, mode, verify) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const report = verify();
  const seconds = (performance.now() - started) / 1_000;
  const used = process.cpuUsage(cpu);
  if (!report.ok) throw new Error(`${item.label} (${mode}): ${JSON.stringify(report.failures.slice(0, 3))}`);
  if (item.best[mode] !== undefined && seconds < item.best[mode])
    [item.best[mode], item.load[mode]] = [seconds, load()];
  item.cpu[mode] = Math.min(item.cpu[mode] ?? Number.POSITIVE_INFINITY, (used.user + used.system) / 1e6);
}

for (let round = 0; round < rounds; round++) {
  for (const item of cases) {
    // This build and the baseline alternate, the baseline first in odd rounds.
    const builds = [['', { verifyBundle, verifyBundleText }]];
    if (baseline) builds[round % 2 === 0 ? 'push' : 'unshift'](['-baseline', baseline]);
    for (const [suffix, build] of builds) {
      const bundle = JSON.parse(item.text);
      measure(item, `object${suffix}`, () => build.verifyBundle(bundle, { publicKey: item.publicKey }));
    }
    // "file" starts from the file's bytes, as `callgate verify FILE` does. A baseline built before
    // verifyBundleText read bytes (`--baseline-text`) gets them decoded first, as its CLI did.
    for (const [suffix, build] of builds)
      measure(item, `file${suffix}`, () =>
        build.verifyBundleText(suffix !== '' && baselineText ? item.bytes.toString('utf8') : item.bytes, {
          publicKey: item.publicKey,
        }),
      );
  }
}
// The size baseline: the version 1 records' callgate-bundle/1 as compact JSON (its smallest form).
const sizeBaseline = cases.find((item) => item.label === 'v1 records, bundle/1, proofs');
const proofsSize = sizeBaseline ? JSON.stringify(JSON.parse(sizeBaseline.text)).length : Number.NaN;
const rate = (records, seconds) => String(Math.round(records / seconds)).padStart(9);
console.log(
  `${'bundle'.padEnd(30)}${'records'.padStart(8)}${'MB'.padStart(7)}${'÷ v1+proofs'.padStart(12)}  ${'object: wall'.padStart(12)}${'cpu'.padStart(9)}${'load'.padStart(6)}  ${'file: wall'.padStart(10)}${'cpu'.padStart(9)}${'load'.padStart(6)}`,
);
for (const item of cases) {
  console.log(
    `${item.label.padEnd(30)}${String(item.records).padStart(8)}${(item.text.length / 1e6).toFixed(1).padStart(7)}${(item.text.length / proofsSize).toFixed(2).padStart(12)}  ${rate(item.records, item.best.object).padStart(12)}${rate(item.records, item.cpu.object)}${String(item.load.object).padStart(6)}  ${rate(item.records, item.best.file).padStart(10)}${rate(item.records, item.cpu.file)}${String(item.load.file).padStart(6)}`,
  );
}
if (baseline) {
  console.log(
    `\nrecords per CPU-second, this build against the baseline (best of ${rounds} interleaved rounds each), load ${load()}`,
  );
  console.log(
    `${'bundle'.padEnd(30)}${'object: new'.padStart(12)}${'baseline'.padStart(10)}${'ratio'.padStart(7)}  ${'file: new'.padStart(10)}${'baseline'.padStart(10)}${'ratio'.padStart(7)}`,
  );
  for (const item of cases) {
    const ratio = (mode) => (item.cpu[`${mode}-baseline`] / item.cpu[mode]).toFixed(2).padStart(7);
    console.log(
      `${item.label.padEnd(30)}${rate(item.records, item.cpu.object).padStart(12)}${rate(item.records, item.cpu['object-baseline']).padStart(10)}${ratio('object')}  ${rate(item.records, item.cpu.file).padStart(10)}${rate(item.records, item.cpu['file-baseline']).padStart(10)}${ratio('file')}`,
    );
  }
}
