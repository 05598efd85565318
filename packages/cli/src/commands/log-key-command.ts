// `callgate log-key`: the command's options and help; its work is loaded when it runs
// (`./log-key.js`), so other commands do not pay for what this one imports.
import { resolve } from 'node:path';
import type { Command, Option } from 'commander';

/** Registers `callgate log-key show` and `callgate log-key rotate` on the program. */
export function registerLogKeyCommands(
  program: Command,
  context: {
    print: (line: string) => void;
    warn: (line: string) => void;
    setExitCode: (code: number) => void;
    exitCodes: string;
    dataOption: () => Option;
  },
): void {
  const group = program.command('log-key').description('the log’s signing key (made on first start)');
  group
    .command('show')
    .description(
      'print the verifier key to pin: callgate verify --public-key KEY (after a rotation, the key before the first one)',
    )
    .addOption(context.dataOption())
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      context.setExitCode(
        await (await import('./log-key.js')).runLogKeyShow(
          resolve(options.data),
          context.print,
          context.warn,
        ),
      ),
    );
  group
    .command('rotate')
    .description(
      'sign checkpoints with a new key from now on; the old key signs the change, so verifiers keep pinning the old key and follow (stop the server first)',
    )
    .addOption(context.dataOption())
    .addHelpText('after', context.exitCodes)
    .action(async (options: { data: string }) => {
      context.setExitCode(
        await (await import('./log-key.js')).runLogKeyRotate(resolve(options.data), context.print),
      );
    });
}
