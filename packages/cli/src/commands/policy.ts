// `callgate policy test` and `callgate policy replay`: change a policy without fear.
import { resolve } from 'node:path';
import { parseDuration, type ReplayChange } from '@callgate/core';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { apiKey, folderPath, httpUrl, refuseTogether, runIds, tagged } from '../options.js';

const CHANGES: readonly ReplayChange[] = [
  'same',
  'stricter',
  'more-permissive',
  'not-replayable',
  'refused-by-gate',
];

/** `--since`: a duration back from now (`24h`, `90m`) or a date (ISO 8601); epoch ms. */
export function parseSince(value: string, now = Date.now()): number {
  const duration = parseDuration(value);
  if ('ms' in duration) return now - duration.ms;
  const date = Date.parse(value);
  if (Number.isFinite(date)) return date;
  throw new InvalidArgumentError(
    'expected a duration back from now (30m, 24h) or a date (2026-01-31T12:00:00Z)',
  );
}

function parseChanges(value: string): ReplayChange[] {
  const changes = value.split(',').map((item) => item.trim());
  for (const change of changes)
    if (!CHANGES.includes(change as ReplayChange))
      throw new InvalidArgumentError(`expected a comma-separated list of ${CHANGES.join(', ')}`);
  return changes as ReplayChange[];
}

/** Registers `callgate policy test` and `callgate policy replay`. */
export function registerPolicyCommands(
  program: Command,
  context: {
    print: (line: string) => void;
    warn: (line: string) => void;
    setExitCode: (code: number) => void;
    exitCodes: string;
  },
): void {
  const { print, warn, setExitCode } = context;
  const policy = program.command('policy').description('test a policy, and replay a new one over past calls');
  policy
    .command('test')
    .description(
      'run a policy’s unit tests: each case is a call and the effect, rules and scrubbed fields it must get',
    )
    .argument('<cases>', 'the cases file (YAML)')
    .option('--policy <file>', 'the policy to test (default: the cases file’s policy: key)')
    .option('--json', 'print the results as JSON')
    .addHelpText('after', context.exitCodes)
    .action(async (cases, options) =>
      setExitCode(await (await import('./policy-test.js')).runPolicyTest(cases, { ...options, print, warn })),
    );
  const replay = policy
    .command('replay')
    .description('what a new policy would have decided for every past call, beside what was decided')
    .requiredOption('--policy <file>', 'the new policy (YAML)')
    .option('--runs <ids>', 'replay only these runs (comma-separated ids)', runIds)
    .option(
      '--since <when>',
      'replay runs started since a duration ago (24h) or a date (ISO 8601)',
      tagged('since', (value: string) => parseSince(value)),
    )
    .option(
      '--bundle <file>',
      'replay an exported bundle (its openings give the arguments) instead of the data folder; it is verified first',
    )
    .option(
      '--public-key <key>',
      'with --bundle: the log’s verifier key to pin (C2SP note key: name+id+key), as callgate verify takes it',
    )
    .option('--config <file>', 'callgate.yaml whose tools give the annotations the ledger does not record')
    .option('--tools <file>', 'a YAML or JSON list of tool specs (annotations, trust) for the same use')
    .option('--json', 'print the replay as JSON')
    .option(
      '--fail-on <changes>',
      `exit 1 when a call is one of: ${CHANGES.join(', ')}`,
      tagged('changes', parseChanges),
    )
    .addOption(
      new Option('--data <dir>', 'data folder (SQLite database and vault)')
        .env('CALLGATE_DATA')
        .default('.callgate')
        .argParser(folderPath),
    )
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      setExitCode(
        await (await import('./policy-replay.js')).runPolicyReplay({
          ...options,
          data: resolve(options.data),
          print,
          warn,
        }),
      ),
    );
  refuseTogether(replay, {
    conflicts: [
      ['--bundle', '--data', 'replay a bundle or a data folder'],
      ['--config', '--tools', 'the tool specs come from callgate.yaml or from a tools file, not both'],
    ],
    needs: [['--public-key', '--bundle', 'it pins the key of a bundle; a data folder is not verified']],
  });
  policy
    .command('reload')
    .description('put a new policy in force on a running server (validated, then recorded in the ledger)')
    .option('--file <file>', 'send this policy file (default: the server reads its own policy file again)')
    .addOption(
      new Option('--url <url>', 'the callgate server')
        .env('CALLGATE_URL')
        .default('http://127.0.0.1:7420')
        .argParser(httpUrl),
    )
    .addOption(new Option('--key <key>', 'an admin API key').env('CALLGATE_API_KEY').argParser(apiKey))
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      setExitCode(await (await import('./policy-reload.js')).runPolicyReload({ ...options, print, warn })),
    );
  policy.addHelpText('after', context.exitCodes);
}
