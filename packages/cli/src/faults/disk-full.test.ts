// A full disk, for real: the data folder lives on a small tmpfs, a filler file takes the rest of
// its space, and the server keeps answering with a typed error and a degraded health until the
// space comes back, when writes resume by themselves. Needs root for `mount -t tmpfs`; where
// mounting is not permitted the test says so and is skipped (the same path is covered by the
// store's own fault tests, with an injected I/O error).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicy } from '@callgate/core';
import { createApiKey, createApp, startServer } from '@callgate/server';
import { openEmbedded } from '@callgate/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const POLICY = `
version: 1
default: deny
rules:
  - id: writes
    match: { tools: [write_note] }
    effect: allow
`;
const TOOLS = [
  {
    name: 'write_note',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

let mountPoint: string | undefined;
let skipReason: string | undefined;

beforeAll(() => {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', folder], { stdio: 'pipe' });
    mountPoint = folder;
  } catch (error) {
    skipReason = `mount -t tmpfs is not permitted here: ${(error as Error).message.split('\n')[0]}`;
    rmSync(folder, { recursive: true, force: true });
  }
});

afterAll(() => {
  if (!mountPoint) return;
  execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
  rmSync(mountPoint, { recursive: true, force: true });
});

/** Writes a file of zeros until the file system is full; returns its path. */
function fillDisk(folder: string): string {
  const path = join(folder, 'filler');
  const descriptor = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(descriptor, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(descriptor);
  }
  // Smaller writes take the last few pages too.
  const tail = openSync(path, 'a');
  try {
    for (;;) writeSync(tail, Buffer.alloc(512));
  } catch {
    // full
  } finally {
    closeSync(tail);
  }
  return path;
}

describe('a full disk', () => {
  it('gives store-unavailable (503), health degraded and quick, and writes resume when space returns', async (context) => {
    if (!mountPoint) {
      console.warn(`disk-full test skipped: ${skipReason}`);
      context.skip();
      return;
    }
    const dataDir = join(mountPoint, 'data');
    const embedded = await openEmbedded({
      dataDir,
      policy: loadPolicy(POLICY, { source: 'test' }),
      tools: TOOLS,
    });
    const app = createApp({ engine: embedded.engine, publicKey: embedded.verifierKey });
    const { key } = await createApiKey(embedded.store, { role: 'agent', name: 'agent' });
    const server = await startServer({ app, port: 0, signals: [] });
    let filler: string | undefined;
    try {
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const post = (path: string, body: unknown) =>
        fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const health = async () =>
        (await (await fetch(`${server.url}/v1/health`)).json()) as {
          status: string;
          store: { status: string; reason?: string };
        };
      const run = (await (await post('/v1/runs', { framework: 'test' })).json()) as { run_id: string };
      const decide = (id: string) =>
        post(`/v1/runs/${run.run_id}/decisions`, {
          calls: [{ id, tool: 'write_note', arguments: { text: 'x'.repeat(20_000) } }],
        });
      expect((await decide('before')).status).toBe(200);
      expect(await health()).toMatchObject({ status: 'ok', store: { status: 'ok' } });

      filler = fillDisk(mountPoint);
      // A small write can still fit in the log's slack, so the store may honestly say `ok` again
      // between a refused write and the health probe's own small write. Health must say degraded
      // right after a refusal at least once, and never `ok` while the refused writes continue.
      let degraded: Awaited<ReturnType<typeof health>> | undefined;
      let refusals = 0;
      for (let attempt = 0; attempt < 5 && !degraded; attempt += 1) {
        let refused: Response | undefined;
        for (let index = 0; index < 200 && !refused; index += 1) {
          const response = await decide(`full-${attempt}-${index}`);
          if (response.status !== 200) refused = response;
        }
        expect(refused?.status).toBe(503);
        refusals += 1;
        const body = (await refused?.json()) as { error: { kind: string; message: string } };
        expect(body.error.kind).toBe('store-unavailable');
        expect(body.error.message).toMatch(/SQLITE_FULL/);
        const started = performance.now();
        const answer = await health();
        expect(performance.now() - started).toBeLessThan(1000);
        if (answer.status === 'degraded') degraded = answer;
      }
      expect(refusals).toBeGreaterThan(0);
      expect(degraded).toMatchObject({ status: 'degraded', store: { status: 'unavailable' } });
      expect(degraded?.store.reason).toMatch(/SQLITE_FULL/);
      // Reads still answer.
      expect((await fetch(`${server.url}/v1/runs/${run.run_id}`, { headers })).status).toBe(200);

      rmSync(filler);
      filler = undefined;
      // Writes resume by themselves once there is space: a new run records again. The run that
      // lost a record stays closed (it fails closed rather than run calls it cannot record).
      let resumed = 0;
      for (let index = 0; index < 50 && resumed === 0; index += 1) {
        const fresh = await post('/v1/runs', { framework: 'test' });
        if (fresh.ok) {
          const { run_id } = (await fresh.json()) as { run_id: string };
          const response = await post(`/v1/runs/${run_id}/decisions`, {
            calls: [{ id: `after-${index}`, tool: 'write_note', arguments: { text: 'x' } }],
          });
          if (response.status === 200) resumed += 1;
        }
        if (resumed === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(resumed).toBe(1);
      const closed = await decide('after-space');
      expect(closed.status).toBe(503);
      expect(((await closed.json()) as { error: { kind: string } }).error.kind).toBe('gate-unavailable');
      expect(await health()).toMatchObject({ status: 'ok', store: { status: 'ok' } });
    } finally {
      // Room first, so closing (a WAL checkpoint) does not fail and hide the first failure.
      if (filler) rmSync(filler, { force: true });
      await server.close();
    }
  });
});
