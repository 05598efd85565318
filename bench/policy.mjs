// Policy size against decide time: a policy of N rules (100, 1,000, 8,000 by default), loaded,
// then 100 calls decided in one step by an in-process engine (MemoryStore, signed ledger), side by
// side with another build when `--baseline DIR` names its `packages/core` (e.g. main's), rounds
// interleaved. Each rule names tools of its own (`--names K` per rule, 4 by default) and has a CEL
// condition; every 3rd asks. Printed per size: load ms, first decide of 100 calls ms (candidate
// lists made on first use), a later decide of 100 calls ms (best of 5 steps), best of `--rounds` (3), with the
// 1-minute load average beside each line; with a baseline, the ratio baseline ÷ this build.
// Usage: node bench/policy.mjs [--sizes 100,1000,8000] [--names 4] [--rounds 3] [--baseline DIR]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as current from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import * as currentLedger from '@callgate/core/ledger';
import { load } from './measure.mjs';

const argument = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const sizes = argument('--sizes', '100,1000,8000').split(',').map(Number);
const namesPerRule = Number(argument('--names', '4'));
const rounds = Number(argument('--rounds', '3'));
const baselineDir = argument('--baseline', undefined);
const builds = [{ name: 'this build', core: current, ledger: currentLedger }];
if (baselineDir !== undefined)
  builds.push({
    name: 'baseline',
    core: await import(pathToFileURL(resolve(baselineDir, 'dist/index.js')).href),
    ledger: await import(pathToFileURL(resolve(baselineDir, 'dist/api/ledger.js')).href),
  });

/** A policy of `size` rules, each naming `namesPerRule` tools of its own, with a condition. */
function policyText(size) {
  const lines = ['version: 1', 'default: deny', 'rules:'];
  for (let rule = 0; rule < size; rule++) {
    const tools = Array.from({ length: namesPerRule }, (_, name) => `tool_${rule}_${name}`).join(', ');
    lines.push(
      `  - id: r${rule}`,
      `    match: { tools: [${tools}] }`,
      `    when: args.amount > ${rule % 50}`,
      `    effect: ${rule % 3 === 0 ? 'ask' : 'allow'}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const TOOL_COUNT = 100;
const calls = (prefix, size) =>
  Array.from({ length: 100 }, (_, index) => ({
    id: `${prefix}${index}`,
    tool: `tool_${Math.floor((index * size) / TOOL_COUNT)}_0`,
    arguments: { amount: index },
  }));

async function measure(build, text, size) {
  const started = performance.now();
  const policy = build.core.loadPolicy(text);
  const loadMs = performance.now() - started;
  const tools = Array.from({ length: TOOL_COUNT }, (_, index) => ({
    name: `tool_${Math.floor((index * size) / TOOL_COUNT)}_0`,
    inputSchema: { type: 'object' },
  }));
  const store = new build.core.MemoryStore();
  const keys = generateEd25519KeyPair();
  const origin = 'bench.local/log';
  const ledger = await build.ledger.Ledger.open(store, {
    signer: build.ledger.logSignerFromPrivateKey(origin, keys.privateKey),
    origin,
  });
  const engine = new build.core.Engine({ store, ledger, policy, tools });
  const run = await engine.startRun({ principal: 'bench', framework: 'bench' });
  let at = performance.now();
  await engine.decide(run.run_id, calls('a', size));
  const firstMs = performance.now() - at;
  // A later step: the best of 5 (each in a run of its own, as the run limits would allow).
  let laterMs = Infinity;
  for (let step = 0; step < 5; step++) {
    const later = await engine.startRun({ principal: 'bench', framework: 'bench' });
    at = performance.now();
    await engine.decide(later.run_id, calls(`b${step}-`, size));
    laterMs = Math.min(laterMs, performance.now() - at);
  }
  await engine.close();
  return { loadMs, firstMs, laterMs };
}

const fixed = (value) => value.toFixed(1).padStart(9);
console.log(
  `policy size vs decide time; ${namesPerRule} tool names a rule, best of ${rounds}; node ${process.version}`,
);
console.log(
  `${'rules'.padStart(6)}  ${'build'.padEnd(10)} ${'load ms'.padStart(9)} ${'first 100'.padStart(9)} ${'next 100'.padStart(9)}  load avg`,
);
for (const size of sizes) {
  const text = policyText(size);
  const best = new Map(
    builds.map((build) => [build.name, { loadMs: Infinity, firstMs: Infinity, laterMs: Infinity }]),
  );
  for (let round = 0; round < rounds; round++)
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const figures = await measure(build, text, size);
      const kept = best.get(build.name);
      for (const key of Object.keys(kept)) kept[key] = Math.min(kept[key], figures[key]);
    }
  for (const build of builds) {
    const kept = best.get(build.name);
    console.log(
      `${String(size).padStart(6)}  ${build.name.padEnd(10)} ${fixed(kept.loadMs)} ${fixed(kept.firstMs)} ${fixed(kept.laterMs)}  ${load()}`,
    );
  }
  if (builds.length > 1) {
    const mine = best.get('this build');
    const other = best.get('baseline');
    console.log(
      `${String(size).padStart(6)}  baseline ÷ this build: load ${(other.loadMs / mine.loadMs).toFixed(2)}×, load + first decide ${((other.loadMs + other.firstMs) / (mine.loadMs + mine.firstMs)).toFixed(2)}×, next decide ${(other.laterMs / mine.laterMs).toFixed(2)}×`,
    );
  }
}
