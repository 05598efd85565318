import { Worker } from 'node:worker_threads';
import { type Json, testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { startServer } from './start.js';

// The load runs in a worker thread, so the server's event loop serves requests and nothing else:
// the worker sends decisions for a catastrophic pattern back to back and, alongside, health probes.
const LOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, key, runId, rounds } = workerData;
const headers = { authorization: 'Bearer ' + key, 'content-type': 'application/json' };
const tool = (name, pattern) => ({ name, inputSchema: { type: 'object', properties: { text: { type: 'string', pattern } } } });
const tools = [tool('hostile_tool', '^(a+)+$'), tool('plain_tool', '^a+$')];
const decide = async (id, name = 'hostile_tool') => {
  const started = performance.now();
  const response = await fetch(url + '/v1/runs/' + runId + '/decisions', { method: 'POST', headers,
    body: JSON.stringify({ tools, calls: [{ id, tool: name, arguments: { text: 'a'.repeat(40) + '!' } }] }) });
  const body = await response.json();
  return { ms: performance.now() - started, error: body.verdicts?.[0]?.error };
};
(async () => {
  await decide('warm');
  const results = [];
  for (let round = 0; round < rounds * 2; round += 1) {
    const name = round % 2 === 0 ? 'hostile_tool' : 'plain_tool';
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
    for (let index = 0; index < 60; index += 1) calls.push(await decide('r' + round + '-' + index, name));
    probing = false;
    await probes;
    results.push({ name, calls, health });
  }
  parentPort.postMessage(results);
})().catch((error) => parentPort.postMessage({ failed: String(error) }));
`;

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))] ??
  Number.POSITIVE_INFINITY;

describe('a hostile schema pattern cannot stall the server', () => {
  it('answers a 40-character argument in < 50 ms while health stays < 10 ms p99 (or, on a loaded machine, like a plain pattern)', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      const headers = { authorization: `Bearer ${keys.agent}`, 'content-type': 'application/json' };
      const run: Json = await (
        await fetch(`${server.url}/v1/runs`, { method: 'POST', headers, body: '{"framework":"t"}' })
      ).json();
      const worker = new Worker(LOAD, {
        eval: true,
        workerData: { url: server.url, key: keys.agent, runId: run.run_id, rounds: 2 },
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
      // Health p99 < 10 ms holds on an idle machine; a shared one can pause the process at any
      // moment. So rounds with the catastrophic pattern alternate with rounds of a plain one
      // (`^a+$`, same argument, same traffic): either a hostile round meets the bounds outright, or
      // hostile rounds are no slower than plain ones beyond noise. A stall (seconds per call, health
      // held meanwhile) fails both.
      const figures = results.map((round: Json) => ({
        name: round.name,
        call: quantile(
          round.calls.map((call: Json) => call.ms),
          0.5,
        ),
        health: quantile(round.health, 0.99),
        probes: round.health.length,
      }));
      const summary = figures
        .map(
          (f: Json) =>
            `${f.name}: call p50 ${f.call.toFixed(1)} ms, health p99 ${f.health.toFixed(1)} ms over ${f.probes} probes`,
        )
        .join('; ');
      const hostile = figures.filter((f: Json) => f.name === 'hostile_tool');
      const plain = figures.filter((f: Json) => f.name === 'plain_tool');
      const best = (list: Json[], field: 'call' | 'health') => Math.min(...list.map((f) => f[field]));
      const outright = hostile.some((f: Json) => f.call < 50 && f.health < 10 && f.probes >= 30);
      // Health p99 under load is one unlucky pause: compared with the worst plain round, with room.
      const worst = (list: Json[], field: 'call' | 'health') => Math.max(...list.map((f) => f[field]));
      const likePlain =
        best(hostile, 'call') < Math.min(50, 2 * best(plain, 'call') + 5) &&
        best(hostile, 'health') < 3 * worst(plain, 'health') + 20;
      expect(outright || likePlain, summary).toBe(true);
      expect(Math.max(...hostile.map((f: Json) => f.call)), summary).toBeLessThan(250);
    } finally {
      await server.close();
    }
  });
});
