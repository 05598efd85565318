// `callgate keys`: the command's options and help; its work is loaded when it runs
// (`./keys.js`), so other commands do not pay for what this one imports.
import { resolve } from 'node:path';
import { API_KEY_ROLES } from '@callgate/protocol';
import { type Command, Option } from 'commander';
import { folderPath, refuseTogether } from '../options.js';

type Print = (line: string) => void;

/** The keys live in a data folder or in a shared store: one of them. */
const DATA_OR_STORE = {
  conflicts: [['--data', '--store', 'the keys are in a data folder or in a shared store']] as const,
};

/** Registers `callgate keys create|list|revoke` on the program. */
export function registerKeysCommands(
  program: Command,
  context: { print: Print; warn: Print; setExitCode: (code: number) => void; exitCodes: string },
): void {
  const dataOption = () =>
    new Option('--data <dir>', 'data folder (SQLite database and log key)')
      .env('CALLGATE_DATA')
      .default('.callgate')
      .argParser(folderPath);
  const storeOption = () =>
    new Option('--store <url>', 'postgres:// URL of a shared store (instead of --data)').env(
      'CALLGATE_STORE',
    );
  /** Where the keys are: the shared store when given, else the data folder. */
  const where = (options: { data: string; store?: string }) => options.store ?? resolve(options.data);
  const keys = program
    .command('keys')
    .description('create, list and revoke API keys (stored as hashes in the data folder)');
  keys
    .command('create')
    .description('create an API key and print it once')
    .addOption(
      new Option(
        '--role <role>',
        'agent: decides and records; reviewer: answers approvals and reads; admin: all',
      )
        .choices(API_KEY_ROLES)
        .makeOptionMandatory(),
    )
    .option(
      '--name <name>',
      'a unique name, recorded as run principal and approval reviewer (default <role>-<hex>)',
    )
    .addOption(dataOption())
    .addOption(storeOption())
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      context.setExitCode(
        await (await import('./keys.js')).runKeysCreate(where(options), {
          role: options.role,
          name: options.name,
          print: context.print,
          warn: context.warn,
        }),
      ),
    );
  keys
    .command('list')
    .description('list API keys (names and roles, never the keys)')
    .addOption(dataOption())
    .addOption(storeOption())
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      context.setExitCode(
        await (await import('./keys.js')).runKeysList(where(options), { print: context.print }),
      ),
    );
  keys
    .command('revoke')
    .description('revoke an API key by name')
    .argument('<name>', 'the key’s name')
    .addOption(dataOption())
    .addOption(storeOption())
    .addHelpText('after', context.exitCodes)
    .action(async (name, options) =>
      context.setExitCode(
        await (await import('./keys.js')).runKeysRevoke(where(options), name, {
          print: context.print,
          warn: context.warn,
        }),
      ),
    );
  for (const command of keys.commands) refuseTogether(command, DATA_OR_STORE);
}
