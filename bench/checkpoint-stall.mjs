// How long signing a checkpoint holds the event loop (DESIGN §7: the gateway's p99 at 500
// calls/s), this tree's ledger against another build's, interleaved in one run: a ledger on a
// MemoryStore appends 1,000 records (two per awaited step, as a gateway call's decision and
// outcome), then signs a checkpoint of them (`ledger.checkpoint()`); both are timed, 30 rounds.
// `node bench/checkpoint-stall.mjs [--baseline /path/to/other/tree] [--rounds 30]`
// (the other tree built: its packages/core/dist). Prints medians and the ratio, with the load.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const argument = (name) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const rounds = Number(argument('--rounds') ?? 30);
const here = resolve(import.meta.dirname, '..');
const trees = [['this tree', here]];
if (argument('--baseline')) trees.push(['baseline', resolve(argument('--baseline'))]);

async function load(tree) {
  const dist = join(tree, 'packages/core/dist');
  const core = await import(pathToFileURL(join(dist, 'index.js')).href);
  const ledger = await import(pathToFileURL(join(dist, 'api/ledger.js')).href);
  const crypto = await import(pathToFileURL(join(dist, 'api/crypto.js')).href);
  return { core, ledger, crypto };
}

const message = (sha256, index) => ({
  type: 'model-message',
  role: 'user',
  content_commitment: `sha256:${sha256(`message ${index}`).toString('hex')}`,
  tool_calls: [],
});

async function round({ core, ledger: { Ledger, logSignerFromPrivateKey }, crypto }) {
  const keys = crypto.generateEd25519KeyPair();
  const origin = 'bench.local/log';
  // Checkpoints only when asked: the signing measured is the one below.
  const ledger = await Ledger.open(new core.MemoryStore(), {
    signer: logSignerFromPrivateKey(origin, keys.privateKey),
    origin,
    checkpointEveryRecords: 1_000_000,
    checkpointEveryMs: 3_600_000,
  });
  await ledger.append('run', { type: 'run-start', principal: 'bench', framework: 'bench', labels: {} });
  await ledger.checkpoint();
  const started = performance.now();
  for (let i = 0; i < 500; i++)
    await Promise.all([
      ledger.append('run', message(crypto.sha256, 2 * i)),
      ledger.append('run', message(crypto.sha256, 2 * i + 1)),
    ]);
  const appended = performance.now();
  await ledger.checkpoint();
  const signed = performance.now();
  await ledger.close();
  return { appendUs: ((appended - started) * 1000) / 1000, checkpointMs: signed - appended };
}

const builds = await Promise.all(trees.map(async ([name, tree]) => ({ name, modules: await load(tree) })));
const results = Object.fromEntries(builds.map(({ name }) => [name, { appendUs: [], checkpointMs: [] }]));
const loadBefore = loadavg()[0];
for (let r = 0; r < rounds; r++) {
  for (const { name, modules } of r % 2 === 0 ? builds : [...builds].reverse()) {
    const figures = await round(modules);
    results[name].appendUs.push(figures.appendUs);
    results[name].checkpointMs.push(figures.checkpointMs);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`checkpoint of 1,000 records (two appends per awaited step), ${rounds} rounds interleaved`);
console.log(`load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${loadavg()[0].toFixed(2)}`);
for (const { name } of builds) {
  const { appendUs, checkpointMs } = results[name];
  console.log(
    `${name.padEnd(10)} append µs per record (median) ${median(appendUs).toFixed(1).padStart(7)}   checkpoint ms (median / max) ${median(checkpointMs).toFixed(2)} / ${Math.max(...checkpointMs).toFixed(2)}`,
  );
}
if (builds.length === 2) {
  const [a, b] = builds.map(({ name }) => results[name]);
  console.log(
    `this tree / baseline: checkpoint ${(median(a.checkpointMs) / median(b.checkpointMs)).toFixed(2)}×, append ${(median(a.appendUs) / median(b.appendUs)).toFixed(2)}×`,
  );
}
