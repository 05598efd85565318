// `callgate witness`: the command's options and help; its work is loaded when it runs
// (`./witness.js`), so other commands do not pay for what this one imports.
import { resolve } from 'node:path';
import { witnessSignerFromPrivateKey } from '@callgate/core/ledger';
import type { Command } from 'commander';
import { folderPath, portNumber, verifierKeys } from '../options.js';
import { addRequestTimeoutOptions } from '../request-timeouts.js';
import { DEFAULT_WITNESS_NAME, loadOrCreateWitnessKey } from '../witness/files.js';
import type { WitnessServeOptions } from './witness.js';

/** Registers `callgate witness serve` and `callgate witness key`. */
export function registerWitnessCommands(
  program: Command,
  context: {
    print: (line: string) => void;
    warn: (line: string) => void;
    setExitCode: (code: number) => void;
    exitCodes: string;
  },
): void {
  const witness = program
    .command('witness')
    .description('a witness for callgate logs (C2SP tlog-witness): its own key, state and process');
  const serve = witness
    .command('serve')
    .description('cosign checkpoints of the given logs, each only if consistent with the last one cosigned')
    .requiredOption('--data <dir>', "the witness's folder (its key and state)", folderPath)
    .requiredOption('--log <key>', 'verifier key of a log to witness (repeatable)', verifierKeys)
    .option('--name <name>', `the witness's key name (default ${DEFAULT_WITNESS_NAME})`)
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (default 0: a free one)', portNumber);
  addRequestTimeoutOptions(serve)
    .addHelpText('after', context.exitCodes)
    .action(async (options: WitnessServeOptions) => {
      const running = await (await import('./witness.js')).startWitness({
        ...options,
        warn: context.warn,
      });
      context.print(`witness ${running.verifierKey}`);
      context.print(`listening on ${running.url} (POST /add-checkpoint)`);
      await new Promise<void>((stop) => {
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await running.close();
      context.setExitCode(0);
    });
  witness
    .command('key')
    .description("print the witness's vkey (pin it with callgate verify --witness)")
    .requiredOption('--data <dir>', "the witness's folder", folderPath)
    .option('--name <name>', `the witness's key name (default ${DEFAULT_WITNESS_NAME})`)
    .addHelpText('after', context.exitCodes)
    .action((options: { data: string; name?: string }) => {
      const seed = loadOrCreateWitnessKey(resolve(options.data));
      context.print(witnessSignerFromPrivateKey(options.name ?? DEFAULT_WITNESS_NAME, seed).verifierKey);
      context.setExitCode(0);
    });
}
