// Heap retained per call of one long run (bench/results/gateway.txt 16b's method): an engine
// decides and records 20,000 calls of one open run (after 2,000 warm-up calls), as a gateway
// session does (minted call ids, an allowed read-only tool, outcome `ok`), and the heap in use is
// read after two forced collections before and after; the difference per call is printed. Each
// measurement runs in a fresh child process (`--expose-gc`); `--baseline DIR` (a whole tree of an
// earlier commit, built) alternates the same measurement on that tree's @callgate/core.
//   node bench/call-retention.mjs [--baseline /tmp/tree] [--store memory|sqlite] [--rounds 3] [--calls 20000]
// MemoryStore keeps every record and call row itself; with `--store sqlite` (a fresh data folder,
// synchronous NORMAL) the store keeps nothing in the heap, so what remains is the engine's own.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : fallback;
};

async function measure(root, storeKind, calls) {
  const resolveIn = async (name, sub) => {
    const { createRequire } = await import('node:module');
    return import(pathToFileURL(createRequire(join(root, 'package.json')).resolve(name + sub)).href);
  };
  const core = await resolveIn('@callgate/core', '');
  const policy = core.loadPolicy(
    'version: 1\ndefault: deny\nrules:\n  - { id: reads, match: { tools: [echo] }, effect: allow }\n',
  );
  const tools = [
    {
      name: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true },
    },
  ];
  let engine;
  let close = async () => {};
  if (storeKind === 'sqlite') {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { openEmbedded } = await resolveIn('@callgate/store-sqlite', '');
    const dataDir = await mkdtemp(join(tmpdir(), 'callgate-bench-retention-'));
    const embedded = await openEmbedded({ dataDir, policy, tools, synchronous: 'NORMAL', init: true });
    engine = embedded.engine;
    close = async () => {
      await embedded.close().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
    };
  } else {
    const { generateEd25519KeyPair } = await resolveIn('@callgate/core', '/crypto');
    const { Ledger, logSignerFromPrivateKey } = await resolveIn('@callgate/core', '/ledger');
    const store = new core.MemoryStore();
    const origin = 'bench.local/log';
    const ledger = await Ledger.open(store, {
      signer: logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey),
      origin,
    });
    engine = new core.Engine({ store, ledger, policy, tools });
  }
  const run = await engine.startRun({ principal: 'bench', framework: 'bench' });
  const one = async (index) => {
    const [verdict] = await engine.decide(run.run_id, [
      { id: null, tool: 'echo', arguments: { text: `call ${index}` } },
    ]);
    if (verdict.status !== 'allowed') throw new Error(`not allowed: ${JSON.stringify(verdict.error)}`);
    await engine.recordOutcome(run.run_id, {
      call_id: verdict.call_id,
      outcome: 'ok',
      result: { content: [{ type: 'text', text: `call ${index}` }] },
    });
  };
  for (let index = 0; index < 2_000; index++) await one(index);
  const heap = () => {
    globalThis.gc();
    globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  for (let index = 0; index < calls; index++) await one(index);
  const after = heap();
  await engine.close();
  await close();
  return (after - before) / calls;
}

if (process.argv.includes('--child')) {
  const perCall = await measure(
    argument('--root'),
    argument('--store', 'memory'),
    Number(argument('--calls', '20000')),
  );
  console.log(JSON.stringify({ perCall }));
} else {
  const here = resolve(dirname(self), '..');
  const baseline = argument('--baseline');
  const storeKind = argument('--store', 'memory');
  const rounds = Number(argument('--rounds', '3'));
  const calls = argument('--calls', '20000');
  const trees = [['this tree', here], ...(baseline ? [['baseline', resolve(baseline)]] : [])];
  const figures = new Map(trees.map(([name]) => [name, []]));
  console.log(
    `heap retained per call of one open run, store ${storeKind}, ${calls} calls, ${rounds} rounds; load ${loadavg()[0].toFixed(2)}`,
  );
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? trees : [...trees].reverse();
    for (const [name, root] of order) {
      const child = spawnSync(
        process.execPath,
        ['--expose-gc', self, '--child', '--root', root, '--store', storeKind, '--calls', calls],
        {
          encoding: 'utf8',
        },
      );
      if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`);
      const { perCall } = JSON.parse(child.stdout.trim().split('\n').pop());
      figures.get(name).push(perCall);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  for (const [name, values] of figures)
    console.log(
      `${name.padEnd(10)} bytes per call, median ${median(values).toFixed(0)} (rounds: ${values.map((value) => value.toFixed(0)).join(', ')})`,
    );
  if (baseline) {
    const [mine, theirs] = [median(figures.get('this tree')), median(figures.get('baseline'))];
    console.log(
      `this tree / baseline: ${(mine / theirs).toFixed(2)}; saved ${(theirs - mine).toFixed(0)} bytes per call`,
    );
  }
  console.log(`load ${loadavg()[0].toFixed(2)} after`);
}
