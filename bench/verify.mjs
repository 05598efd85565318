// Offline verification of a 100,000-record bundle, and its size: with per-record inclusion
// proofs (`export --proofs`) and without. Usage: node bench/verify.mjs [--records 100000] [--write DIR]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey, verifyBundle } from '@callgate/core/ledger';
import { load } from './measure.mjs';

const argument = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const target = Number(argument('--records', '100000'));
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

const store = new MemoryStore();
const keys = generateEd25519KeyPair();
const origin = 'bench.local/log';
const ledger = await Ledger.open(store, { signer: logSignerFromPrivateKey(origin, keys.privateKey), origin });
const engine = new Engine({ store, ledger, policy: loadPolicy(POLICY), tools: TOOLS });
// Two runs interleaved, so a run's bundle is a real subset of the log.
const runs = [await engine.startRun({ principal: 'bench', framework: 'bench' })];
runs.push(await engine.startRun({ principal: 'other', framework: 'bench' }));
let i = 0;
while ((await store.ledgerSize()) < target) {
  await Promise.all(
    Array.from({ length: 100 }, (_, n) =>
      engine.decide(runs[n % 10 === 0 ? 1 : 0].run_id, [
        { id: `c${i++}`, tool: 'send_invoice', arguments: { to: 'acme', amount: i % 1000, memo: 'monthly' } },
      ]),
    ),
  );
}
const runId = runs[0].run_id;

console.log(
  `verify, one run of a ${await store.ledgerSize()}-record log — Node ${process.version}, load ${load()}`,
);
console.log(
  `${'bundle'.padEnd(28)}${'records'.padStart(10)}${'MB'.padStart(8)}${'records/s'.padStart(12)}${'load'.padStart(8)}`,
);
for (const [label, options] of [
  ['with proofs (--proofs)', { proofs: true }],
  ['without proofs', {}],
]) {
  const text = JSON.stringify(await ledger.exportRun(runId, options));
  if (writeDir) writeFileSync(join(writeDir, `${options.proofs ? 'proofs' : 'plain'}.json`), text);
  let best = Infinity;
  let records = 0;
  for (let round = 0; round < 3; round++) {
    const bundle = JSON.parse(text);
    const started = performance.now();
    const result = verifyBundle(bundle, { publicKey: bundle.public_key });
    const seconds = (performance.now() - started) / 1_000;
    if (!result.ok) throw new Error(`${label}: ${JSON.stringify(result.failures.slice(0, 3))}`);
    best = Math.min(best, seconds);
    records = bundle.records.length;
  }
  console.log(
    `${label.padEnd(28)}${String(records).padStart(10)}${(text.length / 1e6).toFixed(1).padStart(8)}${String(Math.round(records / best)).padStart(12)}${String(load()).padStart(8)}`,
  );
}
await engine.close();
