import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { startServer } from './start.js';
import { type Json, testApp } from './test-support.js';

// The load runs in a worker thread, so the server's event loop serves requests and nothing else:
// the worker sends decisions for a catastrophic pattern back to back and, alongside, health probes.
const LOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, key, runId, rounds } = workerData;
const headers = { authorization: 'Bearer ' + key, 'content-type': 'application/json' };
const tool = (name, pattern) => ({ name, inputSchema: { type: 'object', properties: { text: { type: 'string', pattern } } } });
const plain = tool('plain_tool', '^a+$');
// A hostile request registers a tool the server has not seen (its schema compiled then) and calls
// it with the argument that backtracks catastrophically; a plain one calls a known tool.
const decide = async (id, name) => {
  const tools = name === 'plain_tool' ? [plain] : [tool(name, '^(a+)+$')];
  const started = performance.now();
  const response = await fetch(url + '/v1/runs/' + runId + '/decisions', { method: 'POST', headers,
    body: JSON.stringify({ tools, calls: [{ id, tool: name, arguments: { text: 'a'.repeat(40) + '!' } }] }) });
  const body = await response.json();
  return { ms: performance.now() - started, error: body.verdicts?.[0]?.error };
};
(async () => {
  await decide('warm', 'plain_tool');
  await decide('warm-hostile', 'hostile_warm');
  const results = [];
  for (let round = 0; round < rounds * 2; round += 1) {
    const hostile = round % 2 === 0;
    const health = [];
    let probing = true;
    const probes = (async () => {
      while (probing) {
        const started = performance.now();
        await (await fetch(url + '/v1/health')).text();
        health.push(performance.now() - started);
      }
    })();
    const calls = [];
    for (let index = 0; index < 60; index += 1) {
      const name = hostile ? 'hostile_' + round + '_' + index : 'plain_tool';
      calls.push(await decide('r' + round + '-' + index, name));
    }
    probing = false;
    await probes;
    results.push({ name: hostile ? 'hostile' : 'plain', calls, health });
  }
  parentPort.postMessage(results);
})().catch((error) => parentPort.postMessage({ failed: String(error) }));
`;

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))] ??
  Number.POSITIVE_INFINITY;

describe('a hostile schema pattern cannot stall the server', () => {
  it('answers a new tool with a catastrophic pattern and a 40-character argument in < 50 ms while health stays < 10 ms p99 (on a loaded machine: as a known plain tool does)', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      const headers = { authorization: `Bearer ${keys.agent}`, 'content-type': 'application/json' };
      const run: Json = await (
        await fetch(`${server.url}/v1/runs`, { method: 'POST', headers, body: '{"framework":"t"}' })
      ).json();
      const worker = new Worker(LOAD, {
        eval: true,
        workerData: { url: server.url, key: keys.agent, runId: run.run_id, rounds: 3 },
      });
      const results: Json = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      expect(results.failed).toBeUndefined();
      for (const round of results) {
        for (const call of round.calls) {
          expect(call.error).toMatchObject({ kind: 'tool-args-invalid' });
          expect(call.error.message).toContain('must match pattern');
        }
      }
      // The issue's figure (a hostile call < 50 ms, health p99 < 10 ms) holds on an idle machine;
      // a shared one can pause the process at any moment. So hostile rounds alternate with plain
      // ones (a known tool, same argument, same traffic), and on a loaded machine a hostile round
      // must cost what its neighbouring plain round costs, compared on medians, which one unlucky
      // pause does not move. A stall (a schema compiled slowly, a pattern that backtracks: tens of
      // ms per request, health held meanwhile) moves every median and fails both.
      const figures = results.map((round: Json) => {
        const calls = round.calls.map((call: Json) => call.ms);
        return {
          name: round.name,
          call50: quantile(calls, 0.5),
          call90: quantile(calls, 0.9),
          callMax: Math.max(...calls),
          health50: quantile(round.health, 0.5),
          health90: quantile(round.health, 0.9),
          health99: quantile(round.health, 0.99),
          probes: round.health.length,
        };
      });
      const summary = `load ${loadavg()[0]?.toFixed(1)}: ${figures
        .map(
          (f: Json) =>
            `${f.name}: call p50 ${f.call50.toFixed(1)} max ${f.callMax.toFixed(1)} ms, health p50/p90/p99 ${f.health50.toFixed(1)}/${f.health90.toFixed(1)}/${f.health99.toFixed(1)} ms over ${f.probes} probes`,
        )
        .join('; ')}`;
      console.log(`hostile schema requests: ${summary}`);
      const pairs: Array<[Json, Json]> = [];
      for (let index = 0; index + 1 < figures.length; index += 2)
        pairs.push([figures[index], figures[index + 1]]);
      const outright = pairs.some(
        ([hostile]) => hostile.callMax < 50 && hostile.health99 < 10 && hostile.probes >= 30,
      );
      const likePlain = pairs.some(
        ([hostile, plain]) =>
          hostile.call50 < 3 * plain.call50 + 5 &&
          hostile.call90 < 3 * plain.call90 + 10 &&
          hostile.health50 < 3 * plain.health50 + 3 &&
          hostile.health90 < 3 * plain.health90 + 5,
      );
      expect(outright || likePlain, summary).toBe(true);
      // Whatever the load, hostile requests are not stalls (a single pause of the whole process,
      // which plain rounds show as well, is not held against them).
      expect(Math.min(...pairs.map(([hostile]) => hostile.call50)), summary).toBeLessThan(50);
    } finally {
      await server.close();
    }
  }, 60_000);
});
