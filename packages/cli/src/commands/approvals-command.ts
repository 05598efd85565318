// `callgate approvals`: the command's options and help; its work is loaded when it runs
// (`./approvals.js`), so other commands do not pay for what this one imports.
import type { Command } from 'commander';
import { Option } from 'commander';
import { apiKey, httpUrl } from '../options.js';
import type { ServerAccess } from './approvals.js';

type Print = (line: string) => void;

/** Registers `callgate approvals list|show|approve|deny` on the program. */
export function registerApprovalsCommands(
  program: Command,
  context: { print: Print; warn: Print; setExitCode: (code: number) => void; exitCodes: string },
): void {
  const serverOptions = (command: Command) =>
    command
      .addOption(
        new Option('--url <url>', 'the callgate server')
          .env('CALLGATE_URL')
          .default('http://127.0.0.1:7420')
          .argParser(httpUrl),
      )
      .addOption(
        new Option('--key <key>', 'a reviewer or admin API key').env('CALLGATE_API_KEY').argParser(apiKey),
      )
      .addHelpText('after', context.exitCodes);
  const access = (options: { url: string; key?: string }): ServerAccess => ({
    url: options.url,
    ...(options.key ? { key: options.key } : {}),
  });
  const approvals = program
    .command('approvals')
    .description('list, show and answer approvals on a running server');
  serverOptions(
    approvals
      .command('list')
      .description('list approvals, oldest first')
      .addOption(
        new Option('--status <status>', 'only this status')
          .choices(['pending', 'approved', 'denied', 'expired', 'withdrawn'])
          .default('pending'),
      )
      .option('--run <id>', 'only this run’s')
      .option('--json', 'print JSON'),
  ).action(async (options) =>
    context.setExitCode(
      await (await import('./approvals.js')).runApprovalsList(access(options), {
        ...options,
        print: context.print,
        warn: context.warn,
      }),
    ),
  );
  serverOptions(
    approvals
      .command('show')
      .description('show one approval')
      .argument('<id>', 'the approval id')
      .option('--json', 'print JSON'),
  ).action(async (id, options) =>
    context.setExitCode(
      await (await import('./approvals.js')).runApprovalsShow(access(options), id, {
        json: options.json,
        print: context.print,
        warn: context.warn,
      }),
    ),
  );
  for (const verb of ['approve', 'deny'] as const) {
    serverOptions(
      approvals
        .command(verb)
        .description(`${verb} a pending approval (recorded with your key’s name)`)
        .argument('<id>', 'the approval id')
        .option('--reason <text>', 'why (recorded in the ledger)'),
    ).action(async (id, options) =>
      context.setExitCode(
        await (await import('./approvals.js')).runApprovalsAnswer(access(options), id, {
          approve: verb === 'approve',
          reason: options.reason,
          print: context.print,
          warn: context.warn,
        }),
      ),
    );
  }
}
