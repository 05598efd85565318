// `callgate mcp`: the command's options and help; its work is loaded when it runs
// (`./mcp.js`), so other commands do not pay for what this one imports.
import { DEFAULT_MCP_PROFILE } from '@callgate/server/defaults';
import { type Command, Option } from 'commander';
import { logLevelOf } from '../log.js';
import { folderPath } from '../options.js';

/** Registers `callgate mcp` on the program. */
export function registerMcpCommand(
  program: Command,
  context: { setExitCode: (code: number) => void; exitCodes: string },
): void {
  program
    .command('mcp')
    .description(
      'serve the MCP gateway to one desktop client over stdio (logs on standard error, SQLite in the data folder)',
    )
    .requiredOption(
      '--stdio',
      'speak MCP over standard input and output (the only transport of this command)',
    )
    .option('--config <file>', 'callgate.yaml: policy, tools, upstreams, mcp, data, vault')
    .addOption(
      new Option('--data <dir>', 'data folder (default .callgate, or data: in the config)')
        .env('CALLGATE_DATA')
        .argParser(folderPath),
    )
    .option(
      '--profile <name>',
      `the profile whose tools the client sees (default mcp.default_profile, else ${DEFAULT_MCP_PROFILE})`,
    )
    .option('--principal <name>', 'who the session acts for, in runs and approvals (default: your user name)')
    .option('--debug', 'log debug lines too (same as CALLGATE_LOG_LEVEL=debug)')
    .addHelpText('after', context.exitCodes)
    .action(async (options) =>
      context.setExitCode(
        await (await import('./mcp.js')).runMcpStdio({
          ...options,
          log: (line) => process.stderr.write(`${line}\n`),
          logLevel: logLevelOf(options.debug, process.env),
        }),
      ),
    );
}
