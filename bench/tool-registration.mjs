// What an agent-registered tool costs the server: a decision request that registers a tool the
// server has not seen (its input schema compiled, the spec stored), beside one that names a known
// tool, and one that registers a tool whose pattern backtracks catastrophically on its argument
// (RE2: linear). In-process, through the server app (no sockets), rounds interleaved so that the
// load of a shared machine falls on all alike; server CPU per request (process.cpuUsage) beside
// wall time. Run: `npm run build --silent && node bench/tool-registration.mjs [--rounds N]`.

import {
  Engine,
  generateEd25519KeyPair,
  Ledger,
  loadPolicy,
  logSignerFromPrivateKey,
  MemoryStore,
} from '@callgate/core';
import { createApiKey, createApp } from '@callgate/server';
import { load, machine } from './measure.mjs';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 6;
const PER_ROUND = 200;

const store = new MemoryStore();
const signer = logSignerFromPrivateKey('bench.local/log', generateEd25519KeyPair().privateKey);
const ledger = await Ledger.open(store, { signer, origin: 'bench.local/log' });
const engine = new Engine({ store, ledger, policy: loadPolicy('version: 1\ndefault: deny\nrules: []\n') });
const app = createApp({ engine, publicKey: signer.verifierKey });
const { key } = await createApiKey(store, { role: 'agent', name: 'bench' });
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const run = await (
  await app.request('/v1/runs', { method: 'POST', headers, body: '{"framework":"bench"}' })
).json();

const tool = (name, pattern) => ({
  name,
  inputSchema: { type: 'object', properties: { text: { type: 'string', pattern } } },
});
const argument = { text: `${'a'.repeat(40)}!` };
const kinds = {
  'known tool': (index) => ({ tools: [tool('known', '^a+$')], name: 'known', id: `k${index}` }),
  'new tool, plain pattern': (index, round) => ({
    tools: [tool(`plain_${round}_${index}`, '^a+$')],
    name: `plain_${round}_${index}`,
    id: `p${round}-${index}`,
  }),
  'new tool, catastrophic pattern': (index, round) => ({
    tools: [tool(`hostile_${round}_${index}`, '^(a+)+$')],
    name: `hostile_${round}_${index}`,
    id: `h${round}-${index}`,
  }),
};

async function decide({ tools, name, id }) {
  const response = await app.request(`/v1/runs/${run.run_id}/decisions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ tools, calls: [{ id, tool: name, arguments: argument }] }),
  });
  await response.json();
}

const totals = Object.fromEntries(Object.keys(kinds).map((name) => [name, { wall: 0, cpu: 0, count: 0 }]));
for (const make of Object.values(kinds)) await decide(make(0, 'warm'));
for (let round = 0; round < rounds; round += 1) {
  for (const [name, make] of Object.entries(kinds)) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let index = 0; index < PER_ROUND; index += 1) await decide(make(index, round));
    const used = process.cpuUsage(cpu);
    totals[name].wall += performance.now() - started;
    totals[name].cpu += (used.user + used.system) / 1000;
    totals[name].count += PER_ROUND;
  }
}
const info = machine();
console.log(
  `tool registration per decision request (${rounds} interleaved rounds of ${PER_ROUND}; ${info.cpu}; load ${load()})`,
);
for (const [name, total] of Object.entries(totals))
  console.log(
    `  ${name.padEnd(32)} ${(total.wall / total.count).toFixed(3)} ms wall   ${(total.cpu / total.count).toFixed(3)} ms CPU`,
  );
console.log(`  tools registered: ${engine.registry.specs().length}`);
