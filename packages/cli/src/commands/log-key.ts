// `callgate log-key rotate`: move a data folder's log to a new key, signed over by the old one.
import { resolve } from 'node:path';
import { rotateLogKey } from '@callgate/store-sqlite';
import { type Command, Option } from 'commander';

/** Registers `callgate log-key rotate`. */
export function registerLogKeyCommands(
  program: Command,
  context: { print: (line: string) => void; setExitCode: (code: number) => void; exitCodes: string },
): void {
  const logKey = program.command('log-key').description("the log's signing key");
  logKey
    .command('rotate')
    .description(
      'sign checkpoints with a new key from now on; the old key signs the change, so verifiers pinning it follow (stop the server first)',
    )
    .addOption(new Option('--data <dir>', 'data folder (default .callgate)').env('CALLGATE_DATA'))
    .addHelpText('after', context.exitCodes)
    .action(async (options: { data?: string }) => {
      const rotated = await rotateLogKey(resolve(options.data ?? '.callgate'));
      context.print(`rotated at log size ${rotated.size}`);
      context.print(`  old key  ${rotated.oldKey}`);
      context.print(`  new key  ${rotated.newKey}`);
      context.setExitCode(0);
    });
}
