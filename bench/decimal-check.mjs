// What the held-exactly check on decimals (docs/ledger.md, invariant 4) costs where numbers are
// read: the gateway's JSON-RPC reader (parseClientJson, fast path), the HTTP body reader
// (parseJsonLossless) and the client's answer reader (decodeAnswer), for an old build (a checkout
// without the check) and this one, side by side in one process: alternating rounds, the median of
// each, the ratio new/old and the load average. Bodies: typical numbers (integers, short
// decimals) and the worst usual case, doubles as JSON.stringify writes them (17 digits: every
// one is checked).
// Run after `npm run build` here and in the old checkout:
//   node bench/decimal-check.mjs --old /work/main [--rounds 11]
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : fallback;
};
const rounds = Number(argument('--rounds', '11'));
const oldRoot = resolve(argument('--old', '/work/main'));
const newRoot = resolve(new URL('..', import.meta.url).pathname);

async function buildOf(root) {
  const load = (path) => import(pathToFileURL(join(root, path)).href);
  const gateway = await load('packages/mcp-gateway/dist/json-rpc.js');
  const core = await load('packages/core/dist/index.js');
  const client = await load('packages/client/dist/json.js');
  const limits = { maxBytes: 4 * 1024 * 1024, maxDepth: 64 };
  return {
    'gateway parseClientJson': (text) => gateway.parseClientJson(text, limits.maxBytes),
    'HTTP parseJsonLossless': (text) => core.parseJsonLossless(text, 'body', limits),
    'client decodeAnswer': (text) => client.decodeAnswer(text),
  };
}

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const call = (values) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: { name: 'record_readings', arguments: { station: 'north-7', values } },
  });
const bodies = {
  'small call, integers and short decimals': call([12, 3.5, 0.25, 1000, -7.125]),
  '200 short decimals (2 places)': call(Array.from({ length: 200 }, () => Math.round(random() * 1e5) / 100)),
  '200 doubles of 17 digits (all checked)': call(Array.from({ length: 200 }, () => random() * 1000)),
};

function time(work, text) {
  let iterations = 50;
  for (;;) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < iterations; index++) work(text);
    const elapsed = Number(process.hrtime.bigint() - started) / 1e3;
    if (elapsed > 50_000) return elapsed / iterations;
    iterations *= 2;
  }
}

const builds = { old: await buildOf(oldRoot), new: await buildOf(newRoot) };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`held-exactly check on decimals, µs per body (median of ${rounds} alternating rounds)`);
console.log(`old: ${oldRoot}  new: ${newRoot}`);
console.log(`load average (1 min) before: ${loadavg()[0].toFixed(2)}`);
for (const [label, text] of Object.entries(bodies)) {
  for (const reader of Object.keys(builds.new)) {
    const samples = { old: [], new: [] };
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 === 0 ? ['old', 'new'] : ['new', 'old'])
        samples[name].push(time(builds[name][reader], text));
    }
    const old = median(samples.old);
    const now = median(samples.new);
    console.log(
      `${label.padEnd(42)} ${reader.padEnd(24)} old ${old.toFixed(1).padStart(8)}  new ${now.toFixed(1).padStart(8)}  new/old ${(now / old).toFixed(2)}`,
    );
  }
}
console.log(`load average (1 min) after: ${loadavg()[0].toFixed(2)}`);
