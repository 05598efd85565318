// `callgate serve`: the command's options and help; its work is loaded when it runs
// (`./serve.js`), so other commands do not pay for what this one imports.
import { CONFIG_KEYS } from '@callgate/server/defaults';
import { type Command, Option } from 'commander';
import { logLevelOf } from '../log.js';
import { fileMode, folderPath, portNumber, refuseTogether } from '../options.js';
import { addRequestTimeoutOptions } from '../request-timeouts.js';

/** Registers `callgate serve` on the program. */
export function registerServeCommand(
  program: Command,
  context: { print: (line: string) => void; setExitCode: (code: number) => void; exitCodes: string },
): void {
  const serve = program
    .command('serve')
    .description(
      'serve the HTTP API, the approvals inbox, the run timeline and the MCP gateway (SQLite in the data folder)',
    )
    .option('--config <file>', `callgate.yaml: ${CONFIG_KEYS.join(', ')}`)
    .addOption(
      new Option('--data <dir>', 'data folder (default .callgate, or data: in the config)')
        .env('CALLGATE_DATA')
        .argParser(folderPath),
    )
    .addOption(
      new Option(
        '--store <url>',
        'postgres:// URL: keep state in PostgreSQL, shared by several replicas (default: SQLite in the data folder)',
      ).env('CALLGATE_STORE'),
    )
    .option(
      '--log-key <file>',
      'with --store: the log key file every replica reads (default: kept in the database)',
    )
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default 7420)', portNumber)
    .option(
      '--socket <file>',
      'listen on this Unix-domain socket instead of a TCP port (clients: CALLGATE_URL=unix:/path/to.sock); a stale socket there is replaced',
    )
    .option(
      '--socket-mode <mode>',
      "the socket file's mode, in octal (default 600: this user only)",
      fileMode,
    )
    .option('--policy <file>', 'policy file (YAML); default: deny everything')
    .option('--init', 'start a new log where a log key has no database (or an empty one) beside it')
    .addOption(
      new Option(
        '--synchronous <mode>',
        'SQLite durability: NORMAL, or FULL (every commit on disk before it is answered); default synchronous: in the config, else NORMAL',
      ).choices(['NORMAL', 'FULL']),
    );
  addRequestTimeoutOptions(serve)
    .option('--debug', 'log debug lines too (same as CALLGATE_LOG_LEVEL=debug)')
    .addHelpText('after', context.exitCodes)
    .action(async (options) => {
      context.setExitCode(
        await (await import('./serve.js')).runServe({
          ...options,
          print: context.print,
          log: (line) => process.stderr.write(`${line}\n`),
          logLevel: logLevelOf(options.debug, process.env),
        }),
      );
    });
  refuseTogether(serve, {
    conflicts: [
      ['--data', '--store', 'state is kept in a data folder or in a shared store'],
      ['--socket', '--host', 'the server listens on a Unix-domain socket or on a TCP address'],
      ['--socket', '--port', 'the server listens on a Unix-domain socket or on a TCP address'],
    ],
  });
}
