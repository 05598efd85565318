// One exit-code rule for every command (docs/operations.md, "Exit codes"): bad input — an unknown
// option, a malformed value, options that cannot go together, a data folder with no callgate
// data — exits 2 naming the option; a refusal by the server (a missing or unknown API key among
// them) exits 1 naming --key. Table-driven over the commands, so a command that answers one of
// these differently fails here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, startServer } from '@callgate/server';
import { acquireWriterLock, openDataDir } from '@callgate/store-sqlite';
import { memoryEngine, POLICY } from '@callgate/testing/server';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from './program.js';
import { callgate } from './test-support.js';

const RUN = '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51';
const APPROVAL = 'apr_0000000000000000';
const folder = mkdtempSync(join(tmpdir(), 'callgate-exit-codes-'));
const missing = join(folder, 'no-such-folder');
const policyFile = join(folder, 'policy.yaml');
writeFileSync(policyFile, POLICY);

/** `callgate ARGS` with CALLGATE_* unset: its exit code and everything it wrote, stderr included. */
async function run(args: string[]): Promise<{ code: number; text: string }> {
  const written: string[] = [];
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const { code, lines } = await callgate(args);
    return { code, text: [...lines, ...written].join('\n') };
  } finally {
    stderr.mockRestore();
  }
}

/** The commands that read a data folder (`--data DIR` is appended). */
const DATA_COMMANDS: string[][] = [
  ['export', '--run', RUN],
  ['runs', 'list'],
  ['runs', 'show', RUN],
  ['log-key', 'show'],
  ['log-key', 'rotate'],
  ['keys', 'list'],
  ['keys', 'revoke', 'someone'],
  ['policy', 'replay', '--policy', policyFile],
];

/** The commands that ask a running server (`--url URL` and the key case are appended). */
const SERVER_COMMANDS: string[][] = [
  ['export', '--run', RUN],
  ['policy', 'reload'],
  ['approvals', 'list'],
  ['approvals', 'show', APPROVAL],
  ['approvals', 'approve', APPROVAL],
  ['approvals', 'deny', APPROVAL],
];

/** Every command: an unknown option is a usage error naming it. */
const ALL_COMMANDS: string[][] = [
  ...DATA_COMMANDS,
  ...SERVER_COMMANDS,
  ['verify', 'bundle.json'],
  ['serve'],
  ['keys', 'create', '--role', 'agent'],
  ['policy', 'test', 'cases.yaml'],
  ['witness', 'key', '--data', folder],
  ['demo'],
  ['mcp', '--stdio'],
];

let server: Awaited<ReturnType<typeof startServer>>;
const saved = { ...process.env };
beforeAll(async () => {
  for (const name of ['CALLGATE_API_KEY', 'CALLGATE_DATA', 'CALLGATE_URL', 'CALLGATE_STORE'])
    delete process.env[name];
  const { engine, publicKey } = await memoryEngine();
  server = await startServer({ app: createApp({ engine, publicKey }), port: 0, signals: [] });
});
afterAll(async () => {
  await server.close();
  process.env = saved;
  rmSync(folder, { recursive: true, force: true });
});

/** Every command of the program, groups included, by its words (`['witness', 'key']`). */
function commandPaths(command: Command, path: string[] = []): string[][] {
  return command.commands.flatMap((sub) => [
    [...path, sub.name()],
    ...commandPaths(sub, [...path, sub.name()]),
  ]);
}

describe('the exit-code rule', () => {
  it('every command’s help says it: an Exit codes section', async () => {
    const paths = commandPaths(
      buildProgram(
        () => {},
        () => {},
      ),
    );
    expect(paths).toContainEqual(['witness', 'key']);
    for (const path of [[], ...paths]) {
      const { code, text } = await run([...path, '--help']);
      expect({ path, code }).toEqual({ path, code: 0 });
      expect(text, `callgate ${path.join(' ')} --help`).toContain('Exit codes:');
    }
  });

  it('an unknown option: 2, naming it', async () => {
    for (const command of ALL_COMMANDS) {
      const { code, text } = await run([...command, '--no-such-option']);
      expect({ command, code }).toEqual({ command, code: 2 });
      expect(text, command.join(' ')).toContain("unknown option '--no-such-option'");
    }
  });

  it('a data folder with no callgate data: 2, naming the folder and --data, making nothing there', async () => {
    for (const command of DATA_COMMANDS) {
      const { code, text } = await run([...command, '--data', missing]);
      expect({ command, code }).toEqual({ command, code: 2 });
      expect(text, command.join(' ')).toContain(`no callgate data in ${missing}`);
      expect(text, command.join(' ')).toContain('--data');
    }
  });

  it('a data folder in use by a running server: 1, a refusal, naming the folder and its holder', async () => {
    const inUse = join(folder, 'in-use');
    await openDataDir(inUse).store.close();
    // This process stands for the running server: a live process holds the folder's writer lock.
    const lock = acquireWriterLock(inUse, 'callgate serve');
    try {
      for (const command of [
        ['log-key', 'rotate'],
        ['export', '--run', RUN],
      ]) {
        const { code, text } = await run([...command, '--data', inUse]);
        expect({ command, code }).toEqual({ command, code: 1 });
        expect(text, command.join(' ')).toContain(`the data folder ${inUse} is in use by callgate serve`);
      }
    } finally {
      lock.release();
    }
  });

  it('no API key: the server refuses, 1, naming --key', async () => {
    for (const command of SERVER_COMMANDS) {
      const { code, text } = await run([...command, '--url', server.url]);
      expect({ command, code }).toEqual({ command, code: 1 });
      expect(text, command.join(' ')).toMatch(/unauthorized: .*--key KEY or CALLGATE_API_KEY/);
    }
  });

  it('an API key that is not one: 2, naming --key, before any request', async () => {
    for (const command of SERVER_COMMANDS) {
      const { code, text } = await run([...command, '--url', server.url, '--key', 'secret']);
      expect({ command, code }).toEqual({ command, code: 2 });
      expect(text, command.join(' ')).toContain("option '--key <key>' argument 'secret' is invalid");
    }
  });

  it('options that cannot go together: 2, naming both', async () => {
    const rows: Array<{ args: string[]; names: [string, string] }> = [
      { args: ['export', '--run', RUN, '--url', server.url, '--data', folder], names: ['--url', '--data'] },
      { args: ['export', '--run', RUN, '--key', `cg_${'a'.repeat(43)}`], names: ['--key', '--url'] },
      { args: ['keys', 'list', '--data', folder, '--store', 'postgres://x/y'], names: ['--data', '--store'] },
      { args: ['serve', '--data', folder, '--store', 'postgres://x/y'], names: ['--data', '--store'] },
      {
        args: ['policy', 'replay', '--policy', policyFile, '--config', 'c.yaml', '--tools', 't.yaml'],
        names: ['--config', '--tools'],
      },
      {
        args: ['policy', 'replay', '--policy', policyFile, '--bundle', 'b.json', '--data', folder],
        names: ['--bundle', '--data'],
      },
      { args: ['verify', 'bundle.json', '--quorum', '2'], names: ['--quorum', '--witness'] },
      {
        args: ['serve', '--headers-timeout', '40s', '--request-timeout', '30s'],
        names: ['--headers-timeout', '--request-timeout'],
      },
      { args: ['serve', '--headers-timeout', '40s'], names: ['--headers-timeout', '--request-timeout'] },
    ];
    for (const { args, names } of rows) {
      const { code, text } = await run(args);
      expect({ args, code }).toEqual({ args, code: 2 });
      for (const name of names) expect(text, args.join(' ')).toContain(`option '${name} <`);
    }
    // A standing setting is not a second request: CALLGATE_DATA does not conflict with --url.
    process.env.CALLGATE_DATA = folder;
    try {
      const { code, text } = await run(['export', '--run', RUN, '--url', server.url]);
      expect(code).toBe(1);
      expect(text).toMatch(/^callgate export: unauthorized: /m);
    } finally {
      delete process.env.CALLGATE_DATA;
    }
  });
});
