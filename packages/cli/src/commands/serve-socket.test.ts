// `callgate serve --socket PATH`: a server on a Unix-domain socket, as a user starts one.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = new URL('../../dist/bin.js', import.meta.url).pathname;
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const made = mkdtempSync(join(tmpdir(), 'cg-serve-sock-'));
  folders.push(made);
  return made;
}

/** Starts `callgate serve ARGS`; resolves with the process and its output once `until` matches it (or it exits). */
function serve(
  args: string[],
  until: RegExp,
): Promise<{ child: ChildProcess; output: () => string; stdout: () => string; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const streams = { stdout: '', stderr: '' };
    const done = () =>
      resolve({ child, output: () => output, stdout: () => streams.stdout, stderr: () => streams.stderr });
    const reader = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      output += chunk.toString('utf8');
      streams[stream] += chunk.toString('utf8');
      if (until.test(output)) done();
    };
    child.stdout.on('data', reader('stdout'));
    child.stderr.on('data', reader('stderr'));
    child.once('error', reject);
    child.once('exit', done);
  });
}

function health(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sent = request({ socketPath: path, path: '/v1/health' }, (answer) => {
      let text = '';
      answer.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      answer.on('end', () => resolve(text));
    });
    sent.on('error', reject);
    sent.end();
  });
}

describe('callgate serve --socket', () => {
  it('serves on the socket (mode 0600, path printed), refuses a second server there, and removes it on stop', async () => {
    const base = folder();
    const socket = join(base, 'callgate.sock');
    const first = await serve(['--data', join(base, 'one'), '--socket', socket], /Press Ctrl\+C/);
    try {
      expect(first.output()).toContain(`callgate serving unix:${socket}\n`);
      expect(first.output()).toContain(`  socket     ${socket}   (mode 0600;`);
      // What is printed is what a client takes: the socket's unix: URL, never a URL below it.
      expect(first.output()).toContain(`clients take CALLGATE_URL=unix:${socket}\n`);
      expect(first.output()).not.toContain(`unix:${socket}/`);
      expect(first.output()).toMatch(
        / {2}approvals {2}not reachable over a socket: a browser needs a TCP port/,
      );
      expect(first.output()).toMatch(/ {2}MCP {8}not reachable over a socket: the MCP toolset/);
      expect(statSync(socket).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await health(socket))).toMatchObject({ status: 'ok' });

      const second = await serve(['--data', join(base, 'two'), '--socket', socket], /$^/);
      expect(second.child.exitCode).toBe(1);
      expect(second.output()).toContain(`socket ${socket}: a server is listening on it already`);
      expect(lstatSync(socket).isSocket()).toBe(true);
    } finally {
      first.child.kill('SIGTERM');
    }
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(() => lstatSync(socket)).toThrow(/ENOENT/);
  });

  it('refuses every bad socket path before touching the data folder', async () => {
    const base = folder();
    const live = join(base, 'live.sock');
    const running = await serve(['--data', join(base, 'running'), '--socket', live], /Press Ctrl\+C/);
    try {
      writeFileSync(join(base, 'notes.txt'), 'mine');
      mkdirSync(join(base, 'afolder'));
      const refusals: ReadonlyArray<[string, number, RegExp]> = [
        [live, 1, /a server is listening on it already/],
        [join(base, 'notes.txt'), 2, /exists and is not a socket/],
        [join(base, 'afolder'), 2, /exists and is not a socket/],
        [join(base, 'nodir', 'x.sock'), 2, /the folder .*nodir does not exist/],
        [join(base, 'x'.repeat(120)), 2, /longer than a Unix socket's/],
      ];
      for (const [path, code, says] of refusals) {
        const data = join(base, 'data');
        const refused = await serve(['--init', '--data', data, '--socket', path], /$^/);
        expect(refused.child.exitCode, path).toBe(code);
        expect(refused.stderr(), path).toMatch(says);
        expect(refused.stdout(), path).not.toMatch(says);
        expect(existsSync(data), `${path}: the data folder was made`).toBe(false);
      }
    } finally {
      running.child.kill('SIGTERM');
    }
    await new Promise((resolve) => running.child.once('exit', resolve));
  });
});
