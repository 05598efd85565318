// Health and readiness with real parts: a real MCP upstream beside one whose server is gone, a
// real SQLite store closed under the server, the real disk's free space.

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createGateway } from '@callgate/mcp-gateway';
import { openDataDir } from '@callgate/store-sqlite';
import { memoryEngine, testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { diskContributor, storeWritableContributor } from './health.js';

const BIN = resolve(import.meta.dirname, '../../../node_modules/.bin');

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('health and readiness', () => {
  it('is ok and ready when nothing is wrong; a contributor’s problem makes it degraded and not ready', async () => {
    const { call, app } = await testApp();
    expect((await call('GET', '/v1/health')).json).toMatchObject({ status: 'ok' });
    expect((await call('GET', '/v1/health')).json.problems).toBeUndefined();
    expect((await call('GET', '/v1/ready')).status).toBe(200);
    const { appInternals } = await import('./app.js');
    const remove = appInternals(app).server.health.add({
      name: 'witness',
      check: () => ['the witness is unreachable'],
    });
    const health = await call('GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({
      status: 'degraded',
      problems: [{ check: 'witness', message: 'the witness is unreachable' }],
    });
    const ready = await call('GET', '/v1/ready');
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({ ready: false, status: 'degraded' });
    remove();
    expect((await call('GET', '/v1/ready')).status).toBe(200);
  });

  it('says which upstream MCP server is down, and /metrics shows it', async () => {
    const { engine, publicKey } = await memoryEngine();
    const gateway = createGateway({
      engine,
      upstreams: [
        { name: 'everything', stdio: { command: join(BIN, 'mcp-server-everything'), args: ['stdio'] } },
        { name: 'gone', http: { url: `http://127.0.0.1:${await closedPort()}/mcp` } },
      ],
    });
    await gateway.start();
    const app = createApp({ engine, publicKey, gateway });
    try {
      const health = await (await app.request('/v1/health')).json();
      expect(health.status).toBe('degraded');
      expect(health.problems).toEqual([{ check: 'upstreams', message: 'upstream gone is disconnected' }]);
      expect((await app.request('/v1/ready')).status).toBe(503);
      const metrics = await (await app.request('/metrics')).text();
      expect(metrics).toContain('callgate_upstream_up{upstream="everything"} 1');
      expect(metrics).toContain('callgate_upstream_up{upstream="gone"} 0');
    } finally {
      await gateway.close();
      await engine.close();
    }
  }, 30_000);

  it('finds a store that refuses writes (a real SQLite store, closed under it)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'callgate-health-'));
    try {
      const { store } = openDataDir(dir);
      const check = storeWritableContributor((value) => store.setMeta('health:probe', value), Date.now, 0);
      expect(await check.check()).toEqual([]);
      await store.close();
      const problems = await check.check();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^the store refuses writes: /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads the real disk: room is fine, less than asked for is nearly full', async () => {
    expect(await diskContributor(tmpdir()).check()).toEqual([]);
    const full = await diskContributor(tmpdir(), { minimumBytes: Number.MAX_SAFE_INTEGER }).check();
    expect(full[0]).toMatch(/nearly full: [\d.]+ MiB free/);
  });

  it('answers 503 on /v1/ready while draining, and health says draining', async () => {
    const { app } = await testApp({ policy: 'version: 1\n' });
    const { appInternals } = await import('./app.js');
    const { server } = appInternals(app);
    const leave = server.lifecycle.enter();
    const drained = server.lifecycle.drain(5_000);
    try {
      const ready = await app.request('/v1/ready');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ ready: false, status: 'draining' });
      expect(await (await app.request('/v1/health')).json()).toMatchObject({ status: 'draining' });
    } finally {
      leave();
      await drained;
    }
  });
});
