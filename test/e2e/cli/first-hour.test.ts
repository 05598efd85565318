// What a person meets in their first hour with the command: a pipe closed early, a server that
// holds the data folder while they export, the key to pin, tables that line up, plural forms,
// and a gateway config started from a folder other than its own.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallgateClient } from '@callgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCallgate, type ServerProcess, startCallgate } from '../server/harness.js';

/** Runs the CLI with standard output closed by its reader before anything is written. */
function runWithClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => done({ code, stderr }));
  });
}

/** The start column of each header word, and of each cell in `line` (cells split by 2+ spaces). */
function columns(line: string): number[] {
  return [...line.matchAll(/(?:^|(?<= {2}))\S/g)].map((match) => match.index ?? -1);
}

let server: ServerProcess;
let runId: string;

beforeAll(async () => {
  server = await startCallgate({ keys: { bot: 'agent', dana: 'reviewer' } });
  const agent = new CallgateClient({ url: server.url, apiKey: server.keys.bot ?? '' });
  const run = await agent.startRun({ framework: 'first-hour', labels: { team: 'billing' } });
  runId = run.run_id;
  await agent.decide(runId, [{ id: 'read-1', tool: 'read_file', arguments: { path: 'a.txt' } }]);
  await agent.endRun(runId, 'completed');
}, 60_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
}, 30_000);

describe('callgate for a newcomer', () => {
  it('stops quietly when its reader closes the pipe (runs list --help | head)', async () => {
    for (const args of [['runs', 'list', '--help'], ['--help']]) {
      const { code, stderr } = await runWithClosedStdout(args);
      expect(stderr).toBe('');
      expect(code).toBe(0);
    }
  });

  it('log-key show prints the key the server banner shows, beside the running server', async () => {
    const shown = await runCallgate(['log-key', 'show', '--data', server.dataDir]);
    expect(shown.code).toBe(0);
    expect(shown.stdout.trim()).toBe(server.verifierKey);
    expect(server.verifierKey).toMatch(/^callgate\.local\/log\/[0-9a-f]{12}\+[0-9a-f]{8}\+/);
    const health = (await (await fetch(`${server.url}/v1/health`)).json()) as { log_key?: string };
    expect(health.log_key).toBe(server.verifierKey);
  });

  it('names the --url form when the server holds the data folder, and exports through it', async () => {
    const local = await runCallgate(['export', '--run', runId, '--data', server.dataDir]);
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('is in use by callgate (serve)');
    expect(local.stderr).toContain(`callgate export --url ${server.url} --key <API key> --run ${runId}`);
    expect(local.stderr).toContain(`GET ${server.url}/v1/runs/${runId}/bundle`);

    const folder = mkdtempSync(join(tmpdir(), 'callgate-first-hour-'));
    try {
      const out = join(folder, 'bundle.json');
      const exported = await runCallgate(['export', '--url', server.url, '--run', runId, '--out', out], {
        CALLGATE_API_KEY: server.keys.dana ?? '',
      });
      expect(exported.stderr).toBe('');
      expect(exported.code).toBe(0);
      expect(exported.stdout).toMatch(/^wrote .*bundle\.json: \d+ records, verifier key /);
      const verified = await runCallgate(['verify', out, '--public-key', server.verifierKey, '--strict']);
      expect(verified.stdout.trim()).toMatch(/^OK: \d+ records, 1 checkpoint, 0 failed checks$/);
      expect(verified.code).toBe(0);

      const missing = await runCallgate([
        'export',
        '--url',
        server.url,
        '--key',
        server.keys.dana ?? '',
        '--run',
        'nope',
      ]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^callgate export: not-found: /);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('lines up the columns of runs list and runs show, and counts in words', async () => {
    const listed = await runCallgate(['runs', 'list', '--data', server.dataDir]);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^run +status +started +framework +principal$/);
    for (const row of rows) expect(columns(row)).toEqual(columns(header ?? ''));

    const shown = await runCallgate(['runs', 'show', runId, '--data', server.dataDir]);
    const lines = shown.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`run ${runId} — completed, first-hour, principal bot, 1 call`);
    expect(lines[1]).toMatch(/^step +call +tool +decision +rule +approval +outcome +time$/);
    expect(columns(lines[2] ?? '')).toEqual(columns(lines[1] ?? ''));
  });
});

describe('a gateway config started from another folder', () => {
  it('names the resolved path and the folder of an upstream command that is not there', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'callgate-first-hour-config-'));
    try {
      writeFileSync(
        join(folder, 'callgate.yaml'),
        'upstreams:\n  - name: files\n    stdio: { command: node_modules/.bin/mcp-server-filesystem, args: [./shared] }\n',
      );
      const elsewhere = mkdtempSync(join(tmpdir(), 'callgate-first-hour-cwd-'));
      const output = await new Promise<string>((done) => {
        const child = spawn(
          process.execPath,
          [
            BIN,
            'serve',
            '--config',
            join(folder, 'callgate.yaml'),
            '--port',
            '0',
            '--data',
            join(folder, 'data'),
          ],
          { cwd: elsewhere, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let text = '';
        const collect = (chunk: Buffer) => {
          text += chunk;
          if (text.includes('Press Ctrl+C to stop.')) child.kill('SIGTERM');
        };
        child.stdout.on('data', collect);
        child.stderr.on('data', collect);
        child.on('close', () => done(text));
      });
      rmSync(elsewhere, { recursive: true, force: true });
      const resolved = join(folder, 'node_modules/.bin/mcp-server-filesystem');
      expect(output).toContain(
        `upstreams  files disconnected, 0 tools (retrying: cannot start upstream files: command node_modules/.bin/mcp-server-filesystem resolves to ${resolved}, which does not exist (relative paths are resolved against ${folder}))`,
      );
      expect(readFileSync(join(folder, 'callgate.yaml'), 'utf8')).toContain('node_modules/.bin');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 30_000);
});
