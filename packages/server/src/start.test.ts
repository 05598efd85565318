import { type Json, testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { startServer } from './start.js';

describe('startServer', () => {
  it('listens on 127.0.0.1, and on close ends waits, finishes accepted requests, then closes engine and store', async () => {
    const { app, engine, keys } = await testApp();
    let storeClosed = false;
    const close = engine.store.close.bind(engine.store);
    engine.store.close = async () => {
      storeClosed = true;
      await close();
    };
    const server = await startServer({ app, port: 0, signals: [] });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${server.url}/v1/health`);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const headers = { authorization: `Bearer ${keys.agent}`, 'content-type': 'application/json' };
    const run: Json = await (
      await fetch(`${server.url}/v1/runs`, { method: 'POST', headers, body: '{"framework":"t"}' })
    ).json();
    const decided: Json = await (
      await fetch(`${server.url}/v1/runs/${run.run_id}/decisions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          calls: [{ id: 'p', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } }],
        }),
      })
    ).json();
    const approvalId = decided.verdicts[0].approval.id;
    const started = Date.now();
    const waiting: Promise<Json> = fetch(`${server.url}/v1/approvals/${approvalId}?wait=30`, {
      headers,
    }).then((response) => response.json());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server.close();
    const state = await waiting;
    expect(state.approval.status).toBe('pending');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(storeClosed).toBe(true);
    await server.closed;
    await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow();
  });

  it('closes the MCP gateway on shutdown, before the engine', async () => {
    const order: string[] = [];
    const gateway = {
      start: async () => [],
      handleRequest: async () => new Response(null, { status: 204 }),
      connectStdio: async () => {
        throw new Error('unused');
      },
      status: () => [],
      close: async () => {
        order.push('gateway');
      },
    };
    const { app, engine } = await testApp({ gateway });
    const closeEngine = engine.close.bind(engine);
    engine.close = async () => {
      order.push('engine');
      await closeEngine();
    };
    const server = await startServer({ app, port: 0, signals: [] });
    await server.close();
    expect(order).toEqual(['gateway', 'engine']);
  });
});
