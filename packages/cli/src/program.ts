import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { registerApprovalsCommands } from './commands/approvals-command.js';
import { registerKeysCommands } from './commands/keys-command.js';
import { registerLogKeyCommands } from './commands/log-key-command.js';
import { registerMcpCommand } from './commands/mcp-command.js';
import { registerPolicyCommands } from './commands/policy.js';
import { registerServeCommand } from './commands/serve-command.js';
import { registerWitnessCommands } from './commands/witness-command.js';
import { EXIT_CODES } from './exit-codes.js';
import { apiKey, folderPath, httpUrl, refuseEmptyValues, refuseTogether, wholeNumber } from './options.js';
import { CLI_VERSION } from './version.js';

/**
 * The `callgate` command. `setExitCode` receives each command's exit code; `print` writes a line
 * of a command's result (standard output); `warn` a line of an error, a refusal or a warning
 * (standard error, by default), so that `callgate verify … > report` never hides why it failed.
 */
export function buildProgram(
  print: (line: string) => void,
  setExitCode: (code: number) => void,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Command {
  const program = new Command('callgate')
    .description(
      'callgate: decide every tool call an agent makes, bind approvals to the exact call, prove it afterwards.',
    )
    .version(CLI_VERSION, '-V, --version', 'print the version of callgate')
    .showHelpAfterError()
    .exitOverride()
    .addHelpText('after', EXIT_CODES);
  const dataOption = () =>
    new Option('--data <dir>', 'data folder (SQLite database and log key)')
      .env('CALLGATE_DATA')
      .default('.callgate')
      .argParser(folderPath);

  program
    .command('demo')
    .description('run a scripted agent on real files, then export, verify and show its timeline')
    .option(
      '--dir <dir>',
      'folder for the data and the sandbox (default: a new temporary folder)',
      folderPath,
    )
    .option('--interactive', 'you answer the approvals at the terminal instead of the scripted reviewer')
    .addOption(
      new Option('--synchronous <mode>', 'SQLite durability').choices(['NORMAL', 'FULL']).default('NORMAL'),
    )
    .addHelpText('after', EXIT_CODES)
    .action(async (options) =>
      setExitCode(await (await import('./commands/demo.js')).runDemo({ ...options, out: print })),
    );

  const exportCommand = program
    .command('export')
    .description('write a run as a bundle (callgate-bundle/3; callgate-bundle/1 with --proofs)')
    .requiredOption('--run <id>', 'the run to export')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--openings', 'include the vault openings of the run’s commitments')
    .option('--proofs', 'one inclusion proof per record (callgate-bundle/1) instead of one batch proof')
    .option(
      '--reveal-run-keys',
      'include the run’s key, so an auditor holding the arguments can check their keyed digests (implied by --openings)',
    )
    .addOption(dataOption())
    .option('--url <url>', 'export through this running server (GET /v1/runs/ID/bundle) instead', httpUrl)
    .addOption(new Option('--key <key>', 'an API key for --url').env('CALLGATE_API_KEY').argParser(apiKey))
    .addHelpText('after', EXIT_CODES)
    .action(async (options) =>
      setExitCode(
        await (await import('./commands/ledger.js')).runExport(resolve(options.data), {
          run: options.run,
          out: options.out,
          openings: options.openings,
          proofs: options.proofs,
          revealRunKeys: options.revealRunKeys,
          url: options.url,
          key: options.key,
          print,
          warn,
        }),
      ),
    );
  refuseTogether(exportCommand, {
    conflicts: [['--url', '--data', 'with --url the server reads its own data folder']],
    needs: [['--key', '--url', 'the key is for the server --url names']],
  });

  const verify = program
    .command('verify')
    .description(
      'verify a bundle offline: records, chains, inclusion, checkpoints, approvals, policies, openings',
    )
    .argument('<file>', 'the bundle file, at most 511 MiB (- reads standard input)')
    .option('--public-key <key>', 'the log’s verifier key to pin (C2SP note key: name+id+key)')
    .option('--strict', 'also require every run to end with run-end')
    .option('--expect-size <n>', 'require a checkpoint covering at least this many records', wholeNumber(0))
    .option(
      '--witness <key>',
      'a witness vkey (name+id+key, C2SP tlog-cosignature); repeatable: the newest checkpoint must be cosigned',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--quorum <n>',
      'how many of the --witness keys must have cosigned (default: all)',
      wholeNumber(1),
    )
    .option('--json', 'print the report as JSON')
    .addHelpText('after', EXIT_CODES)
    .action(async (file, options) =>
      setExitCode(
        await (await import('./commands/verify.js')).runVerify(file, { ...options, out: print, err: warn }),
      ),
    );
  refuseTogether(verify, {
    needs: [['--quorum', '--witness', 'it counts the cosignatures of the --witness keys given']],
  });

  const runs = program.command('runs').description('list and show runs').addHelpText('after', EXIT_CODES);
  runs
    .command('list')
    .description('list runs, newest first')
    .option('--limit <n>', 'how many', wholeNumber(1), 20)
    .addOption(dataOption())
    .addHelpText('after', EXIT_CODES)
    .action(async (options) =>
      setExitCode(
        await (await import('./commands/ledger.js')).runRunsList(resolve(options.data), {
          limit: options.limit,
          print,
        }),
      ),
    );
  runs
    .command('show')
    .description('show a run’s timeline')
    .argument('<id>', 'the run id')
    .addOption(dataOption())
    .addHelpText('after', EXIT_CODES)
    .action(async (id, options) =>
      setExitCode(
        await (await import('./commands/ledger.js')).runRunsShow(resolve(options.data), id, print, warn),
      ),
    );

  const commandContext = { print, warn, setExitCode, exitCodes: EXIT_CODES };
  registerServeCommand(program, commandContext);
  registerMcpCommand(program, commandContext);
  registerKeysCommands(program, commandContext);
  registerApprovalsCommands(program, commandContext);
  registerLogKeyCommands(program, { ...commandContext, dataOption });
  registerPolicyCommands(program, commandContext);
  registerWitnessCommands(program, commandContext);

  for (const group of program.commands) {
    if (['keys', 'approvals', 'log-key', 'witness'].includes(group.name()))
      group.addHelpText('after', EXIT_CODES);
  }
  // One rule for every option that takes a value: an empty one is bad usage, never "none".
  return refuseEmptyValues(program);
}
