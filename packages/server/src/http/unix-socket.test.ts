import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCallgateError } from '@callgate/protocol';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../start.js';
import { MAX_SOCKET_PATH_BYTES, prepareSocketPath } from './unix-socket.js';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'cg-sock-'));
});
afterEach(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** One HTTP/1.1 request over the socket at `path`: the status and the body as text. */
function over(
  path: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const sent = request({ socketPath: path, method, path: target, headers }, (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => (text += chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: text }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/** A bare listener on `path` that a test can leave behind as a stale file (closing it would remove the file). */
function listenBare(path: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ path }, () => resolve(server));
  });
}

describe('startServer on a Unix-domain socket', () => {
  it('serves the API there with mode 0600, names it unix:PATH, and removes the file on close', async () => {
    const { app, keys } = await testApp();
    const path = join(folder, 'callgate.sock');
    const server = await startServer({ app, socket: path, signals: [] });
    expect(server.url).toBe(`unix:${path}`);
    expect(server.socket).toBe(path);
    expect(server.port).toBe(0);
    expect(lstatSync(path).isSocket()).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await over(path, 'GET', '/v1/health')).body)).toMatchObject({ status: 'ok' });
    const headers = { authorization: `Bearer ${keys.agent}`, 'content-type': 'application/json' };
    const run = await over(path, 'POST', '/v1/runs', headers, '{"framework":"t"}');
    expect(run.status).toBe(201);
    expect(JSON.parse(run.body).run_id).toMatch(/^[0-9a-f-]{36}$/);
    await server.close();
    await server.closed;
    expect(() => lstatSync(path)).toThrow(/ENOENT/);
  });

  it('sets the mode it is given, whatever the umask', async () => {
    const { app } = await testApp();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0o400, max: 0o777 }),
        fc.integer({ min: 0, max: 0o777 }),
        async (mode, umask) => {
          const path = join(folder, `m${mode.toString(8)}.sock`);
          const previous = process.umask(umask);
          try {
            const server = await startServer({ app, socket: path, socketMode: mode, signals: [] });
            expect(process.umask()).toBe(umask);
            expect(statSync(path).mode & 0o777).toBe(mode);
            await server.close();
          } finally {
            process.umask(previous);
          }
        },
      ),
      { numRuns: 5 },
    );
  });

  it('replaces a stale socket a stopped process left behind', async () => {
    const path = join(folder, 'stale.sock');
    // A process that listens there and is killed (SIGKILL: no chance to remove its file).
    const child = spawn(
      process.execPath,
      ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(child.stdout, 'data');
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(lstatSync(path).isSocket()).toBe(true);
    expect(await prepareSocketPath(path)).toBe(path);
    expect(() => lstatSync(path)).toThrow(/ENOENT/);
  });

  it('refuses a socket a server answers on, a path that is not a socket, and a path too long', async () => {
    const live = join(folder, 'live.sock');
    const bare = await listenBare(live);
    try {
      const refused = await prepareSocketPath(live).catch((error: unknown) => error);
      expect(isCallgateError(refused) && refused.kind).toBe('conflict');
      expect((refused as Error).message).toContain(`socket ${live}: a server is listening on it already`);
      expect(lstatSync(live).isSocket()).toBe(true);
    } finally {
      bare.close();
    }
    const file = join(folder, 'notes.txt');
    writeFileSync(file, 'mine');
    const notSocket = await prepareSocketPath(file).catch((error: unknown) => error);
    expect(isCallgateError(notSocket) && notSocket.kind).toBe('request-invalid');
    expect((notSocket as Error).message).toContain('exists and is not a socket');
    expect(statSync(file).size).toBe(4);
    const long = join(folder, 'x'.repeat(MAX_SOCKET_PATH_BYTES));
    const tooLong = await prepareSocketPath(long).catch((error: unknown) => error);
    expect(isCallgateError(tooLong) && tooLong.kind).toBe('request-invalid');
    expect((tooLong as Error).message).toContain(`longer than a Unix socket's ${MAX_SOCKET_PATH_BYTES}`);
  });

  it('refuses a path whose folder does not exist or is not a folder, saying which', async () => {
    const missing = join(folder, 'nodir', 'x.sock');
    const refused = await prepareSocketPath(missing).catch((error: unknown) => error);
    expect(isCallgateError(refused) && refused.kind).toBe('request-invalid');
    expect((refused as Error).message).toBe(
      `socket ${missing}: the folder ${join(folder, 'nodir')} does not exist; create it first or choose another path`,
    );
    writeFileSync(join(folder, 'plain'), '');
    const underFile = await prepareSocketPath(join(folder, 'plain', 'x.sock')).catch(
      (error: unknown) => error,
    );
    expect((underFile as Error).message).toContain(`${join(folder, 'plain')} is not a folder`);
  });
});

describe('stopping a server on a socket', () => {
  it('leaves no other file in the folder than the socket while serving', async () => {
    const { app } = await testApp();
    const path = join(folder, 'only.sock');
    const server = await startServer({ app, socket: path, signals: [] });
    expect(readdirSync(folder)).toEqual(['only.sock']);
    await server.close();
    expect(readdirSync(folder)).toEqual([]);
  });

  it('removes only its own socket file: servers started in turn on one path, each after the last file was deleted, closed in any order', async () => {
    const { app } = await testApp();
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 4 })
          .chain((count) =>
            fc.tuple(fc.constant(count), fc.shuffledSubarray([...Array(count).keys()], { minLength: count })),
          ),
        async ([count, closing]) => {
          const path = join(folder, 'shared.sock');
          const servers = [];
          for (let index = 0; index < count; index += 1) {
            rmSync(path, { force: true });
            servers.push(await startServer({ app, socket: path, signals: [] }));
          }
          const open = new Set(servers.keys());
          const newest = count - 1;
          for (const index of closing) {
            await servers[index]?.close();
            open.delete(index);
            // The path is the newest server's until that one stops; the others' files are gone.
            if (open.has(newest)) {
              expect(lstatSync(path).isSocket(), `after closing ${index}`).toBe(true);
              expect((await over(path, 'GET', '/v1/health')).status).toBe(200);
            } else expect(() => lstatSync(path), `after closing ${index}`).toThrow(/ENOENT/);
          }
        },
      ),
      { numRuns: 6 },
    );
  });

  it('leaves a user file put at the path after its socket was deleted', async () => {
    const { app } = await testApp();
    const path = join(folder, 'taken.sock');
    const server = await startServer({ app, socket: path, signals: [] });
    rmSync(path);
    writeFileSync(path, 'mine');
    await server.close();
    expect(statSync(path).size).toBe(4);
  });
});
