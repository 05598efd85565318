// How the command's options read their values. Every option whose value is a number, a port, a
// URL or a list of run ids goes through one of these parsers (commander's `argParser`): a bad
// value throws commander's InvalidArgumentError, which commander prints as `error: option
// '--port <port>' argument 'x' is invalid. expected …` (the option, the value, what was
// expected) and the command exits 2 (bin.ts). Each parser carries its `kind`, so the options
// audit test can find and feed every one of them.
import { statSync } from 'node:fs';
import { parseDuration, readWholeNumber } from '@callgate/core';
import { parseVerifierKey } from '@callgate/core/ledger';
import { API_KEY_PATTERN } from '@callgate/protocol';
import { parseSocketMode, SOCKET_MODE_RULE } from '@callgate/server/defaults';
import { type Command, InvalidArgumentError } from 'commander';

/** What a parser reads; the audit test generates bad values per kind. */
export type ValueKind =
  | 'whole-number'
  | 'port'
  | 'http-url'
  | 'run-ids'
  | 'since'
  | 'changes'
  | 'folder'
  | 'duration'
  | 'api-key'
  | 'verifier-keys'
  | 'file-mode';

/** An option parser that says what it reads. */
export type ValueParser<T> = ((value: string) => T) & { kind: ValueKind; minimum?: number };

/** `parse` (which throws InvalidArgumentError for a bad value), tagged with what it reads. */
export function tagged<T>(kind: ValueKind, parse: (value: string) => T, minimum?: number): ValueParser<T> {
  return Object.assign(parse, { kind, ...(minimum !== undefined ? { minimum } : {}) });
}

/**
 * The message of a refused value: `problem` when it already says what was expected, else
 * `expected …: problem` (commander prints it after `argument 'x' is invalid.`), so no message
 * says what was expected twice.
 */
function expected(what: string, problem: string): string {
  return problem.startsWith('expected ') ? problem : `expected ${what}: ${problem}`;
}

/**
 * A whole number ≥ `minimum` written in decimal digits (`10`; not `1e3`, `0x10`, `2.0`, ` 5`, `-0`, `010`),
 * read exactly (core's `readWholeNumber`: digits past 2^53 − 1 are refused, never rounded).
 */
export function wholeNumber(minimum: number): ValueParser<number> {
  return tagged(
    'whole-number',
    (value) => {
      const read = readWholeNumber(value, { minimum });
      if ('problem' in read)
        throw new InvalidArgumentError(expected(`a whole number ≥ ${minimum}`, read.problem));
      return read.value;
    },
    minimum,
  );
}

/** A TCP port, 0 to 65535 (0: the system picks a free one), read as {@link wholeNumber} reads. */
export const portNumber: ValueParser<number> = tagged('port', (value) => {
  const read = readWholeNumber(value, { minimum: 0, maximum: 65535 });
  if ('problem' in read)
    throw new InvalidArgumentError(
      read.problem.startsWith('expected a whole number written')
        ? 'expected a port, 0 to 65535 (0 picks a free one)'
        : expected('a port, 0 to 65535 (0 picks a free one)', read.problem),
    );
  return read.value;
});

/**
 * A duration as every callgate file writes one (`300ms`, `30s`, `5m`, or whole ms `500`), read
 * exactly by core's `parseDuration` (`1000.00000000000001ms` is refused, not rounded); ms.
 */
export const duration: ValueParser<number> = tagged('duration', (value) => {
  const parsed = parseDuration(/^\d+$/.test(value) ? Number(value) : value, value);
  if ('problem' in parsed)
    throw new InvalidArgumentError(
      parsed.problem.startsWith('expected ')
        ? 'expected a duration such as 300ms, 30s, 5m or whole milliseconds (500)'
        : expected('a duration such as 300ms, 30s or 5m', parsed.problem),
    );
  return parsed.ms;
});

/**
 * A log's verifier key (C2SP note key `name+id+key`, as `callgate log-key show` prints it), for a
 * repeatable option: each value is added to the ones before it.
 */
export const verifierKeys: ValueParser<string[]> = tagged(
  'verifier-keys',
  (value: string, previous: string[] = []) => {
    try {
      parseVerifierKey(value);
    } catch (error) {
      throw new InvalidArgumentError(
        `expected a log's verifier key name+id+key (callgate log-key show prints it): ${(error as Error).message}`,
      );
    }
    return [...previous, value];
  },
);

/** A server's base URL: `http://` or `https://` with a host (`http://127.0.0.1:7420`). */
export const httpUrl: ValueParser<string> = tagged('http-url', (value) => {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    const hint = /^[\w.-]+:\d+/.test(value) ? ` (did you mean http://${value}?)` : '';
    throw new InvalidArgumentError(
      `expected an http:// or https:// URL such as http://127.0.0.1:7420${hint}`,
    );
  }
  return value.replace(/\/+$/, '');
});

/** Run ids are UUIDs (version 7 when callgate made them). */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A comma-separated list of run ids (UUIDs), at least one. */
export const runIds: ValueParser<string[]> = tagged('run-ids', (value) => {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  const bad = ids.find((id) => !RUN_ID.test(id));
  if (ids.length === 0 || bad !== undefined)
    throw new InvalidArgumentError(
      `expected comma-separated run ids (UUIDs such as 019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51, from callgate runs list)${bad !== undefined ? `; ${JSON.stringify(bad)} is not one` : ''}`,
    );
  return ids;
});

/** A folder: one that exists, or a path where one can be made (not a file, not empty). */
export const folderPath: ValueParser<string> = tagged('folder', (value) => {
  if (value.trim() === '') throw new InvalidArgumentError('expected a folder');
  let isFile = false;
  try {
    isFile = !statSync(value).isDirectory();
  } catch {
    // Not there yet: the command makes it.
  }
  if (isFile) throw new InvalidArgumentError('expected a folder; this is a file');
  return value;
});

/**
 * A socket file's permission bits written in octal as `chmod` takes them, by the rule
 * `socket_mode:` in callgate.yaml follows (`parseSocketMode`): three digits 0-7, optionally after
 * one `0` (`600`, `0660`), keeping read and write for the owner; the number (e.g. 0o600 = 384).
 */
export const fileMode: ValueParser<number> = tagged('file-mode', (value) => {
  const mode = parseSocketMode(value);
  if (mode === undefined) throw new InvalidArgumentError(`expected ${SOCKET_MODE_RULE}`);
  return mode;
});

/** A callgate API key as `callgate keys create` prints one: `cg_` and 43 base64url characters. */
export const apiKey: ValueParser<string> = tagged('api-key', (value) => {
  if (!API_KEY_PATTERN.test(value))
    throw new InvalidArgumentError(
      'expected a callgate API key: cg_ and 43 letters, digits, - or _ (callgate keys create prints one)',
    );
  return value;
});

/**
 * Refuses an empty or blank value for every option of `command` and its subcommands that takes a
 * value, on the command line or from its environment variable (`--public-key ''`, `--key "$KEY"`
 * with KEY unset): a usage error (exit 2) naming the option, as `error: option '--public-key
 * <key>' argument '' is invalid. expected a value, …`, before the option's own parser runs. An
 * empty value never means "none": the message says to leave the option out instead, or, for an
 * option the command requires, that it is required. Call it once the command's
 * options are all declared; the options keep their parsers (and the parsers' `kind`).
 */
export function refuseEmptyValues(command: Command): Command {
  for (const option of command.options) {
    if (!option.required && !option.optional) continue;
    const parse = option.parseArg as ((value: string, previous: unknown) => unknown) | undefined;
    const checked = (value: string, previous: unknown) => {
      if (value.trim() === '')
        throw new InvalidArgumentError(
          `expected a value, not an empty one (an unset shell variable gives one): ${option.mandatory ? 'the option is required' : 'leave the option out instead'}`,
        );
      if (parse !== undefined) return parse(value, previous);
      // Commander's own reading of a value without a parser: the value, or added to the others.
      if (!option.variadic) return value;
      return previous === option.defaultValue || !Array.isArray(previous) ? [value] : [...previous, value];
    };
    option.argParser(parse !== undefined ? Object.assign(checked, parse) : checked);
  }
  for (const sub of command.commands) refuseEmptyValues(sub);
  return command;
}

/**
 * How a command's options depend on each other, by long flag (`--data`): `conflicts` pairs that
 * cannot go together, `needs` an option that means nothing without another. Each with the reason
 * the message gives.
 */
export interface OptionRules {
  conflicts?: ReadonlyArray<readonly [string, string, string]>;
  needs?: ReadonlyArray<readonly [string, string, string]>;
}

const DECLARED = new WeakMap<Command, OptionRules[]>();

/** The rules {@link refuseTogether} holds `command` to (for the audit test). */
export function optionRulesOf(command: Command): readonly OptionRules[] {
  return DECLARED.get(command) ?? [];
}

/**
 * Holds `command` to `rules` before its action runs: a usage error (exit 2) naming both options,
 * as `error: option '--data <dir>' cannot be used with option '--url <url>': why`. Only what is
 * written on the command line counts as given: a default or an environment variable (such as
 * CALLGATE_DATA) is a standing setting, not a second request, and does not conflict.
 * @throws Error at registration when a rule names an option the command does not have.
 */
export function refuseTogether(command: Command, rules: OptionRules): Command {
  DECLARED.set(command, [...(DECLARED.get(command) ?? []), rules]);
  const option = (long: string) => {
    const found = command.options.find((candidate) => candidate.long === long);
    if (!found) throw new Error(`callgate ${command.name()} has no option ${long}`);
    return found;
  };
  const all = [...(rules.conflicts ?? []), ...(rules.needs ?? [])];
  for (const [first, second] of all) {
    option(first);
    option(second);
  }
  const given = (long: string) => command.getOptionValueSource(option(long).attributeName()) === 'cli';
  command.hook('preAction', () => {
    for (const [first, second, why] of rules.conflicts ?? [])
      if (given(first) && given(second))
        command.error(
          `error: option '${option(first).flags}' cannot be used with option '${option(second).flags}': ${why}`,
          { exitCode: 2, code: 'callgate.conflictingOption' },
        );
    for (const [first, second, why] of rules.needs ?? [])
      if (given(first) && command.getOptionValue(option(second).attributeName()) === undefined)
        command.error(
          `error: option '${option(first).flags}' needs option '${option(second).flags}': ${why}`,
          {
            exitCode: 2,
            code: 'callgate.missingOption',
          },
        );
  });
  return command;
}
