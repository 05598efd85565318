// The options audit: every option of every command that reads a number, a port, a URL, run ids,
// a time or a choice refuses a bad value before the command runs, naming the option, the value and
// what was expected; the binary exits 2. Options are found by walking the program, so a new
// option that reads such a value without a parser fails here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logSignerFromPrivateKey } from '@callgate/core/ledger';
import { type Command, CommanderError, type Option } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  apiKey,
  fileMode,
  httpUrl,
  optionRulesOf,
  portNumber,
  runIds,
  type ValueParser,
  wholeNumber,
} from './options.js';
import { buildProgram } from './program.js';

const BIN = new URL('../dist/bin.js', import.meta.url).pathname;

/** Placeholders of values that are free text (paths, names, ids, keys): no parser to audit. */
const FREE_TEXT = new Set(['file', 'id', 'name', 'key', 'text', 'host', 'cases', 'principal']);
/** `--store` reads a postgres:// URL when the store is opened, in a message that hides its password. */
const CHECKED_LATER = new Set(['--store']);

interface Found {
  path: string[];
  option: Option;
}

function valueOptions(command: Command, path: string[] = []): Found[] {
  const here = command.options
    .filter((option) => option.required || option.optional)
    .map((option) => ({ path, option }));
  return [...here, ...command.commands.flatMap((sub) => valueOptions(sub, [...path, sub.name()]))];
}

const program = () =>
  buildProgram(
    () => {},
    () => {},
  );

/** Parses `args`; resolves with the error commander threw and what it wrote to standard error. */
async function parse(args: string[]): Promise<{ error: unknown; stderr: string }> {
  const root = program();
  let stderr = '';
  const quiet = (command: Command) => {
    command.configureOutput({ writeOut: () => {}, writeErr: (text) => (stderr += text) });
    command.showHelpAfterError(false);
    for (const sub of command.commands) quiet(sub);
  };
  quiet(root);
  // No action may run: a bad value must stop the parse first.
  const actions = (command: Command) => {
    command.action(() => {
      throw new Error(`the action of ${command.name()} ran`);
    });
    for (const sub of command.commands) actions(sub);
  };
  actions(root);
  try {
    await root.parseAsync(['node', 'callgate', ...args]);
    return { error: undefined, stderr };
  } catch (error) {
    return { error, stderr };
  }
}

const notDigits = fc.string({ maxLength: 12 }).filter((text) => !/^\d+$/.test(text));

/** Bad values for each kind of parser. */
function badValues(parser: ValueParser<unknown>): fc.Arbitrary<string> {
  switch (parser.kind) {
    case 'whole-number':
      return fc.oneof(
        notDigits,
        fc.constantFrom(
          'nope',
          '1e3',
          '0x10',
          '2.5',
          ' 5',
          'Infinity',
          // One spelling of a whole number (docs/gate.md): none of these.
          '-0',
          '-00',
          '010',
          '+5',
          '0o10',
          '7.0',
          '1e2',
          '1_000',
          '99999999999999999999',
          '9007199254740992',
          '1.0000000000000001',
        ),
        ...((parser.minimum ?? 0) > 0
          ? [fc.integer({ min: 0, max: (parser.minimum ?? 1) - 1 }).map(String)]
          : []),
        fc.integer({ max: -1 }).map(String),
      );
    case 'port':
      return fc.oneof(
        notDigits,
        fc.integer({ min: 65_536 }).map(String),
        fc.integer({ max: -1 }).map(String),
        fc.constantFrom('80.5', 'http', '7420 ', '80.0000000000000001', '9007199254740993'),
        fc.constantFrom('-0', '-00', '010', '00', '+5', '0x10', '0o10', '7.0', '1e2', '1_000', 'Infinity'),
      );
    case 'http-url':
      return fc.oneof(
        fc.string({ maxLength: 20 }).filter((text) => !/^https?:\/\/[^/]/.test(text)),
        fc.constantFrom(
          '127.0.0.1:7617',
          'localhost:7420',
          'ftp://x',
          'http://',
          'file:///etc/passwd',
          'nope',
        ),
      );
    case 'run-ids':
      return fc.oneof(
        fc.string({ maxLength: 20 }).filter((text) => text.split(',').some((id) => id.trim() !== '')),
        fc.constantFrom(
          'nope',
          ',',
          '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a5',
          '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51,x',
        ),
      );
    case 'since':
      return fc.constantFrom('nope', '12 parsecs', 'yesterday', '-5m', '');
    case 'changes':
      return fc.constantFrom('nope', 'same,nope', 'permissive', '');
    case 'duration':
      return fc.constantFrom(
        'nope',
        'abc',
        '0',
        '0ms',
        ' 5s',
        '5s ',
        '5 s',
        '\t5s\n',
        '-0',
        '010',
        '05s',
        '+5',
        '0x10',
        '7.0',
        '1_000',
        'Infinity',
        '-5s',
        '5 min',
        '2d',
        '0.5ms',
        '1e3',
        '99999999999',
        '',
        '1000.00000000000001ms',
        '1.00000000000000001s',
        '9007199254740993',
      );
    case 'verifier-keys':
      return fc.constantFrom('garbage', 'a+b+c', 'example.com/log+00000000+AAAA', '');
    case 'api-key':
      return fc.oneof(
        fc.string({ maxLength: 50 }).filter((text) => !/^cg_[A-Za-z0-9_-]{43}$/.test(text)),
        fc.constantFrom(
          'secret',
          'cg_',
          `cg_${'a'.repeat(42)}`,
          `cg_${'a'.repeat(44)}`,
          `cg_${'a'.repeat(42)}+`,
        ),
      );
    case 'file-mode':
      return fc.oneof(
        fc.string({ maxLength: 6 }).filter((text) => !/^0?[0-7]{3}$/.test(text)),
        // Well formed, but the owner could not connect: the owner digit lacks read or write.
        fc
          .tuple(
            fc.constantFrom('', '0'),
            fc.constantFrom(0, 1, 2, 3, 4, 5),
            fc.integer({ min: 0, max: 0o77 }),
          )
          .map(([zero, owner, rest]) => `${zero}${owner}${rest.toString(8).padStart(2, '0')}`),
        fc.constantFrom('8', '777 ', '0x180', '384', '0o1777', '-600', 'rw-------', '6000', '0o', '60'),
        fc.constantFrom('0', '000', '0o600', '0o660', '400', '0200'),
      );
    case 'folder':
      // A file where a folder is expected (this test file, the package manifest), or nothing.
      return fc.constantFrom(
        new URL(import.meta.url).pathname,
        new URL('../package.json', import.meta.url).pathname,
        '',
        ' ',
      );
  }
}

describe('every option that reads a value', () => {
  const found = valueOptions(program());

  it('has a parser, choices, or a free-text placeholder', () => {
    expect(found.length).toBeGreaterThan(40);
    const unchecked = found.filter(({ option }) => {
      if (option.argChoices || (option.parseArg as Partial<ValueParser<unknown>> | undefined)?.kind)
        return false;
      if (CHECKED_LATER.has(option.long ?? '')) return false;
      const placeholder = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
      return !FREE_TEXT.has(placeholder?.[1] ?? placeholder?.[2] ?? '');
    });
    expect(unchecked.map(({ path, option }) => `callgate ${path.join(' ')} ${option.flags}`)).toEqual([]);
  });

  it('refuses a bad value before the command runs, naming the option, the value and what was expected', async () => {
    const parsed = found.filter(({ option }) => (option.parseArg as Partial<ValueParser<unknown>>)?.kind);
    // The audit covers each kind the commands use.
    expect(new Set(parsed.map(({ option }) => (option.parseArg as ValueParser<unknown>).kind))).toEqual(
      new Set([
        'whole-number',
        'port',
        'http-url',
        'run-ids',
        'since',
        'changes',
        'folder',
        'duration',
        'api-key',
        'verifier-keys',
        'file-mode',
      ]),
    );
    for (const { path, option } of parsed) {
      const parser = option.parseArg as ValueParser<unknown>;
      await fc.assert(
        fc.asyncProperty(badValues(parser), async (value) => {
          const { error, stderr } = await parse([...path, `${option.long}=${value}`]);
          expect(error, `${path.join(' ')} ${option.long}=${value}`).toBeInstanceOf(CommanderError);
          expect((error as CommanderError).code).toBe('commander.invalidArgument');
          expect(stderr).toContain(`option '${option.flags}' argument '${value}' is invalid. expected `);
          // Said once: the message does not repeat what was expected.
          expect(stderr.match(/expected /g), stderr).toHaveLength(1);
        }),
        { numRuns: 25 },
      );
    }
  });

  it('refuses an empty or blank value, naming the option, for every option that takes one (generated)', async () => {
    expect(found.length).toBeGreaterThan(40);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...found),
        fc.stringMatching(/^[ \t\r\n]{0,3}$/),
        fc.boolean(),
        async ({ path, option }, blank, joined) => {
          const given = joined ? [`${option.long}=${blank}`] : [option.long as string, blank];
          const { error, stderr } = await parse([...path, ...given]);
          expect((error as CommanderError)?.code, `${path.join(' ')} ${given.join(' ')}`).toBe(
            'commander.invalidArgument',
          );
          expect(stderr).toContain(
            `option '${option.flags}' argument '${blank}' is invalid. expected a value, not an empty one`,
          );
          // Leaving out an option the command requires is no way out: the message says it is required.
          expect(stderr).toContain(
            option.mandatory ? 'the option is required' : 'leave the option out instead',
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('says of an empty value for a required option that it is required, not to leave it out', async () => {
    const required = found.filter(({ option }) => option.mandatory);
    expect(required.length).toBeGreaterThan(3);
    for (const { path, option } of required) {
      const { stderr } = await parse([...path, `${option.long}=`]);
      expect(stderr, `${path.join(' ')} ${option.long}`).toContain(
        `option '${option.flags}' argument '' is invalid. expected a value, not an empty one (an unset shell variable gives one): the option is required`,
      );
      expect(stderr).not.toContain('leave the option out');
    }
  });

  it('refuses an empty value from an option’s environment variable too', async () => {
    const saved = process.env.CALLGATE_API_KEY;
    process.env.CALLGATE_API_KEY = '';
    try {
      const { error, stderr } = await parse(['approvals', 'list']);
      expect((error as CommanderError).code).toBe('commander.invalidArgument');
      expect(stderr).toContain("from env 'CALLGATE_API_KEY' is invalid. expected a value, not an empty one");
    } finally {
      if (saved === undefined) delete process.env.CALLGATE_API_KEY;
      else process.env.CALLGATE_API_KEY = saved;
    }
  });

  it('refuses a value outside its choices, listing them', async () => {
    const chosen = found.filter(({ option }) => option.argChoices);
    expect(chosen.length).toBeGreaterThan(3);
    for (const { path, option } of chosen) {
      const { error, stderr } = await parse([...path, `${option.long}=not-a-choice`]);
      expect((error as CommanderError).code).toBe('commander.invalidArgument');
      expect(stderr).toContain(
        `'not-a-choice' is invalid. Allowed choices are ${option.argChoices?.join(', ')}`,
      );
    }
  });

  it('reads the good values it promises', () => {
    expect(wholeNumber(1)('20')).toBe(20);
    expect(portNumber('0')).toBe(0);
    expect(portNumber('65535')).toBe(65535);
    expect(httpUrl('http://127.0.0.1:7617/')).toBe('http://127.0.0.1:7617');
    expect(runIds('019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51, 019A0C4E-7D2B-7C3A-9F10-2B6F0E8D4A52')).toHaveLength(
      2,
    );
    const key = `cg_${'A1_-'.repeat(10)}abc`;
    expect(apiKey(key)).toBe(key);
    expect([fileMode('600'), fileMode('0660'), fileMode('700'), fileMode('0777')]).toEqual([
      0o600, 0o660, 0o700, 0o777,
    ]);
  });
});

/** A value `option` accepts, so that only the rule under test can refuse the command. */
function goodValue(option: Option): string {
  if (option.argChoices) return option.argChoices[0] as string;
  const parser = option.parseArg as Partial<ValueParser<unknown>> | undefined;
  switch (parser?.kind) {
    case 'whole-number':
      return String(Math.max(parser.minimum ?? 0, 1));
    case 'port':
      return '0';
    case 'http-url':
      return 'http://127.0.0.1:1';
    case 'run-ids':
      return '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51';
    case 'since':
      return '24h';
    case 'changes':
      return 'same';
    case 'duration':
      return '5s';
    case 'folder':
      return tmpdir();
    case 'file-mode':
      return '600';
    case 'api-key':
      return `cg_${'a'.repeat(43)}`;
    case 'verifier-keys':
      return logSignerFromPrivateKey('example.com/log', new Uint8Array(32).fill(1)).verifierKey;
    default:
      return 'x';
  }
}

function commandsOf(command: Command, path: string[] = []): Array<{ path: string[]; command: Command }> {
  return [{ path, command }, ...command.commands.flatMap((sub) => commandsOf(sub, [...path, sub.name()]))];
}

describe('options that cannot go together', () => {
  const declared = commandsOf(program()).flatMap(({ path, command }) =>
    optionRulesOf(command).map((rules) => ({ path, command, rules })),
  );

  it('are refused before the command runs, naming both, for every rule a command declares', async () => {
    expect(declared.length).toBeGreaterThan(6);
    for (const { path, command, rules } of declared) {
      const option = (long: string) => command.options.find((candidate) => candidate.long === long) as Option;
      const given = (long: string) => {
        const found = option(long);
        return found.required || found.optional ? [`${long}=${goodValue(found)}`] : [long];
      };
      // What the command needs anyway: its arguments and mandatory options.
      const needed = [
        ...command.registeredArguments.filter((argument) => argument.required).map(() => 'x'),
        ...command.options
          .filter((candidate) => candidate.mandatory)
          .flatMap((candidate) => given(candidate.long as string)),
      ];
      for (const [first, second] of rules.conflicts ?? []) {
        const { error, stderr } = await parse([...path, ...needed, ...given(first), ...given(second)]);
        expect((error as CommanderError).code, `${path.join(' ')} ${first} ${second}`).toBe(
          'callgate.conflictingOption',
        );
        expect(stderr).toContain(
          `option '${option(first).flags}' cannot be used with option '${option(second).flags}'`,
        );
      }
      for (const [first, second] of rules.needs ?? []) {
        const { error, stderr } = await parse([...path, ...needed, ...given(first)]);
        expect((error as CommanderError).code, `${path.join(' ')} ${first}`).toBe('callgate.missingOption');
        expect(stderr).toContain(`option '${option(first).flags}' needs option '${option(second).flags}'`);
        // With the option it needs, the rule lets the command run (here: the stub action).
        const both = await parse([...path, ...needed, ...given(first), ...given(second)]);
        expect((both.error as Error).message).toMatch(/^the action of .* ran$/);
      }
    }
  });
});

describe('the callgate binary', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 20_000 });

  it('exits 2 for a bad option value, saying which and why, and runs nothing', () => {
    const replay = run(['policy', 'replay', '--policy', 'none.yaml', '--runs', 'nope']);
    expect(replay.status).toBe(2);
    expect(replay.stderr).toContain("option '--runs <ids>' argument 'nope' is invalid");
    const url = run(['approvals', 'list', '--url', '127.0.0.1:7617']);
    expect(url.status).toBe(2);
    expect(url.stderr).toContain('did you mean http://127.0.0.1:7617?');
  });

  it('reading or revoking keys in a folder without data refuses and makes no log there', () => {
    const folder = mkdtempSync(join(tmpdir(), 'callgate-keys-'));
    try {
      for (const args of [
        ['keys', 'list'],
        ['keys', 'revoke', 'someone'],
        ['runs', 'list'],
      ]) {
        const result = run([...args, '--data', join(folder, 'typo')]);
        expect(result.status, args.join(' ')).toBe(2);
        expect(result.stderr).toContain(`no callgate data in ${join(folder, 'typo')}`);
      }
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('prints its package version for --version and -V', () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const result = run([flag]);
      expect(result.status).toBe(0);
      expect(result.stdout.trim()).toBe(version);
    }
  });
});
