// `callgate log-key show` (the verifier key a reader pins) and `callgate log-key rotate` (move the
// log to a new key, signed over by the old one).

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KEY_ROTATIONS_META_KEY, keyToPin, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { openDataDir, rotateLogKey } from '@callgate/store-sqlite';
import type { Command, Option } from 'commander';
import { requireDataDir } from './data-folder.js';

/**
 * Prints the verifier key (C2SP note key `name+id+key`) to give `callgate verify --public-key` for
 * the data folder's log: its key, or after `callgate log-key rotate` the key it had before its
 * first rotation (bundles carry the rotation statements, and the verifier follows them from the
 * pinned key), then `note`s the current key. Reads only: it works beside a running server.
 *
 * @returns 0, or 1 when the folder holds no log yet (nothing was ever served or recorded there).
 * @throws CallgateError `request-invalid` when `dataDir` holds no callgate data (exit code 2).
 */
export async function runLogKeyShow(
  dataDir: string,
  print: (line: string) => void,
  note: (line: string) => void = () => {},
): Promise<number> {
  requireDataDir(dataDir);
  if (!existsSync(join(dataDir, 'log-key.json'))) {
    print(
      `callgate log-key show: no log in ${dataDir} yet (callgate serve or callgate demo makes one); pass --data DIR or set CALLGATE_DATA`,
    );
    return 1;
  }
  const { store, logKey } = openDataDir(dataDir);
  try {
    const origin = await store.getMeta('ledger:origin');
    if (!origin) {
      print(
        `callgate log-key show: the log in ${dataDir} has not been opened yet: start callgate serve once`,
      );
      return 1;
    }
    const current = logSignerFromPrivateKey(origin, logKey.privateKey).verifierKey;
    const rotations = await store.getMeta(KEY_ROTATIONS_META_KEY);
    const statements = rotations === undefined ? [] : (JSON.parse(rotations) as string[]);
    // Bundles carry the rotations, followed from the pinned key: the key to pin is the chain's first.
    const pin = keyToPin(current, statements);
    print(pin);
    if (pin !== current)
      note(
        `callgate log-key show: the log was rotated ${statements.length === 1 ? 'once' : `${statements.length} times`} and now signs with ${current}; its bundles carry the rotations, which a verifier pinning the key above follows`,
      );
    return 0;
  } finally {
    await store.close();
  }
}

/** Registers `callgate log-key show` and `callgate log-key rotate` on the program. */
export function registerLogKeyCommands(
  program: Command,
  context: {
    print: (line: string) => void;
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
        await runLogKeyShow(resolve(options.data), context.print, (line) =>
          process.stderr.write(`${line}\n`),
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
      requireDataDir(resolve(options.data));
      const rotated = await rotateLogKey(resolve(options.data));
      context.print(`rotated at log size ${rotated.size}`);
      context.print(`  old key  ${rotated.oldKey}`);
      context.print(`  new key  ${rotated.newKey}`);
      context.print(
        '  keep pinning the key callgate log-key show prints (the key before the first rotation): bundles carry the rotations, and the verifier follows them from it',
      );
      context.setExitCode(0);
    });
}
