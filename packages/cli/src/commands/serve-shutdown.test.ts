// `callgate serve` and `callgate mcp --stdio` own every process they start: an upstream whose
// connection keeps failing leaves no process behind per attempt, and one SIGTERM or SIGINT stops
// everything within a bounded time, releases the data folder's writer lock and exits 0. Real
// binary, real MCP filesystem server, processes counted in /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = new URL('../../dist/bin.js', import.meta.url).pathname;
const FILESYSTEM_SERVER = new URL('../../../../node_modules/.bin/mcp-server-filesystem', import.meta.url)
  .pathname;
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Every live descendant of `pid`, with its command line (from /proc). */
function descendants(pid: number): Array<{ pid: number; command: string }> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent pid is the second field after the command in parentheses.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: Array<{ pid: number; command: string }> = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      let command = '';
      try {
        command = readFileSync(`/proc/${child}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        continue;
      }
      found.push({ pid: child, command });
      visit(child);
    }
  };
  visit(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function failingUpstreams(): { dataDir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'callgate-shutdown-'));
  folders.push(dir);
  mkdirSync(join(dir, 'sandbox'));
  const config = join(dir, 'callgate.yaml');
  writeFileSync(
    config,
    [
      'upstreams:',
      // Starts and initializes, but listing its tools cannot finish in 1 ms: every connection
      // attempt fails after its process has started.
      '  - name: files',
      '    stdio:',
      `      command: ${FILESYSTEM_SERVER}`,
      `      args: [${join(dir, 'sandbox')}]`,
      '    timeout: 1ms',
      '',
    ].join('\n'),
  );
  return { dataDir: join(dir, 'data'), config };
}

function serve(
  config: string,
  dataDir: string,
): { child: ChildProcess; out: () => string; ready: Promise<void> } {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--config', config, '--data', dataDir, '--port', '0'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stderr?.resume();
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Press Ctrl+C to stop.')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before it was ready:\n${out}`)));
  });
  return { child, out: () => out, ready };
}

describe('callgate serve and the processes it starts', () => {
  it.each(['serve', 'mcp'] as const)(
    '%s stops on one SIGTERM while an upstream is still starting (initialize never answered)',
    async (command) => {
      const dir = mkdtempSync(join(tmpdir(), 'callgate-shutdown-'));
      folders.push(dir);
      const config = join(dir, 'callgate.yaml');
      writeFileSync(
        config,
        [
          'upstreams:',
          '  - name: silent',
          '    stdio:',
          `      command: ${process.execPath}`,
          '      args: ["-e", "setInterval(() => {}, 1000)"]',
          '',
        ].join('\n'),
      );
      const dataDir = join(dir, 'data');
      const args = command === 'serve' ? ['serve', '--port', '0'] : ['mcp', '--stdio'];
      // mcp --stdio ends when its standard input closes: kept open, as a desktop client does.
      const child = spawn(process.execPath, [BIN, ...args, '--config', config, '--data', dataDir], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.stderr?.resume();
      const pid = child.pid as number;
      try {
        let silent: Array<{ pid: number; command: string }> = [];
        for (
          const started = Date.now();
          silent.length === 0 && Date.now() - started < 10_000;
          await sleep(100)
        )
          silent = descendants(pid).filter((process) => process.command.includes('setInterval'));
        expect(silent).toHaveLength(1);
        expect(out).not.toContain('Press Ctrl+C');
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.kill('SIGTERM');
        // The upstream's own close takes up to 4 s (stdin closed, then SIGTERM, then SIGKILL).
        const code = await Promise.race([exited, sleep(12_000).then(() => 'still running' as const)]);
        expect(code, out).toBe(0);
        if (command === 'serve') expect(out).toContain('callgate stopped');
        expect(existsSync(join(dataDir, 'writer.lock'))).toBe(false);
        await sleep(200);
        expect(silent.map((process) => process.pid).filter(alive)).toEqual([]);
      } finally {
        if (alive(pid)) child.kill('SIGKILL');
      }
    },
    30_000,
  );

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`keeps one process per failing upstream, and one ${signal} stops them all, releases writer.lock and exits 0`, async () => {
      const { dataDir, config } = failingUpstreams();
      const { child, out, ready } = serve(config, dataDir);
      const pid = child.pid as number;
      try {
        // Watch the attempts from the first one (while serve starts), then the retries after 1 s,
        // 2 s, 5 s: never more than one filesystem server at a time.
        let isReady = false;
        void ready.then(() => {
          isReady = true;
        });
        const seen = new Set<number>();
        let most = 0;
        // Until serve is up and a second attempt started (or 45 s: a loaded machine starts each
        // process slowly).
        for (
          const started = Date.now();
          (!isReady || seen.size < 2) && Date.now() - started < 45_000;
          await sleep(150)
        ) {
          const live = descendants(pid).filter((process) =>
            process.command.includes('mcp-server-filesystem'),
          );
          for (const process of live) seen.add(process.pid);
          most = Math.max(most, live.length);
        }
        await ready;
        expect(existsSync(join(dataDir, 'writer.lock'))).toBe(true);
        expect(seen.size, 'the upstream was started again after failing').toBeGreaterThanOrEqual(2);
        expect(most, 'filesystem servers alive at once').toBe(1);
        const owned = [...seen, ...descendants(pid).map((process) => process.pid)];

        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        const signalled = Date.now();
        child.kill(signal);
        const code = await Promise.race([exited, sleep(15_000).then(() => 'still running' as const)]);
        expect(code, out()).toBe(0);
        expect(Date.now() - signalled).toBeLessThan(15_000);
        expect(out()).toContain('callgate stopped');
        expect(existsSync(join(dataDir, 'writer.lock')), 'writer.lock released').toBe(false);
        expect(existsSync(join(dataDir, 'server-address.json'))).toBe(false);
        await sleep(200);
        expect(owned.filter(alive), 'processes left running').toEqual([]);
      } finally {
        if (alive(pid)) child.kill('SIGKILL');
      }
    }, 90_000);
  }
});
