import { type Approval, CallgateClient, isCallgateError } from '@callgate/client';
import { formatDuration } from '@callgate/core';
import { type Command, Option } from 'commander';
import { exitCodeOfKind, refusalLine } from '../exit-codes.js';
import { table } from '../format.js';
import { apiKey, httpUrl } from '../options.js';

type Print = (line: string) => void;

/** Where the approvals commands reach the server. */
export interface ServerAccess {
  url: string;
  key?: string;
}

function client(access: ServerAccess): CallgateClient {
  return new CallgateClient({ url: access.url, ...(access.key ? { apiKey: access.key } : {}) });
}

function timeLeft(approval: Approval): string {
  if (approval.status !== 'pending') return approval.status;
  const seconds = Math.max(0, Math.round((approval.expires_at - Date.now()) / 1000));
  return `pending, ${formatDuration(seconds * 1000)} left`;
}

function describe(approval: Approval, print: Print): void {
  print(`approval ${approval.id}  ${timeLeft(approval)}`);
  print(`  tool       ${approval.tool}`);
  print(`  run        ${approval.run_id}`);
  print(`  call       ${approval.call_id}`);
  print(`  rule       ${approval.rules.join(', ') || '(default)'} — ${approval.reason}`);
  print(`  arguments  ${JSON.stringify(approval.arguments ?? {})}  (from the model)`);
  if (approval.injected && Object.keys(approval.injected).length > 0)
    print(`  injected   ${JSON.stringify(approval.injected)}  (added by the framework, not from the model)`);
  print(`  asked      ${new Date(approval.created_at).toISOString()}`);
  if (approval.status !== 'pending') {
    print(
      `  answered   ${approval.resolved_at ? new Date(approval.resolved_at).toISOString() : ''} by ${approval.reviewer ?? '—'}`,
    );
    if (approval.response_reason) print(`  reason     ${approval.response_reason}`);
  }
}

async function guarded(name: string, print: Print, action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (error) {
    if (!isCallgateError(error)) throw error;
    print(refusalLine(`approvals ${name}`, error));
    return exitCodeOfKind(error.kind);
  }
}

/** `callgate approvals list [--status S] [--run ID] [--json]`: approvals oldest first. */
export function runApprovalsList(
  access: ServerAccess,
  options: { status?: string; run?: string; json?: boolean; print: Print },
): Promise<number> {
  return guarded('list', options.print, async () => {
    const approvals = await client(access).listApprovals({
      ...(options.status ? { status: options.status as Approval['status'] } : {}),
      ...(options.run ? { run_id: options.run } : {}),
    });
    if (options.json) {
      options.print(JSON.stringify(approvals, null, 2));
      return 0;
    }
    if (approvals.length === 0) options.print(`no ${options.status ?? ''} approvals`.replace('  ', ' '));
    if (approvals.length > 0) {
      const rows = approvals.map((approval) => [
        approval.id,
        approval.tool,
        timeLeft(approval),
        approval.run_id,
        approval.reason,
      ]);
      options.print(table([['approval', 'tool', 'status', 'run', 'reason'], ...rows]));
    }
    return 0;
  });
}

/** `callgate approvals show ID [--json]`. */
export function runApprovalsShow(
  access: ServerAccess,
  id: string,
  options: { json?: boolean; print: Print },
): Promise<number> {
  return guarded('show', options.print, async () => {
    const { approval } = await client(access).getApproval(id);
    if (options.json) options.print(JSON.stringify(approval, null, 2));
    else describe(approval, options.print);
    return 0;
  });
}

/** `callgate approvals approve|deny ID [--reason R]`: answers as the key's name. */
export function runApprovalsAnswer(
  access: ServerAccess,
  id: string,
  options: { approve: boolean; reason?: string; print: Print },
): Promise<number> {
  return guarded(options.approve ? 'approve' : 'deny', options.print, async () => {
    const api = client(access);
    const reason = options.reason ? { reason: options.reason } : {};
    const approval = options.approve ? await api.approve(id, reason) : await api.deny(id, reason);
    options.print(`${approval.id}: ${approval.status} by ${approval.reviewer ?? '—'} (${approval.tool})`);
    return approval.status === (options.approve ? 'approved' : 'denied') ? 0 : 1;
  });
}

/** Registers `callgate approvals list|show|approve|deny` on the program. */
export function registerApprovalsCommands(
  program: Command,
  context: { print: Print; setExitCode: (code: number) => void; exitCodes: string },
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
    context.setExitCode(await runApprovalsList(access(options), { ...options, print: context.print })),
  );
  serverOptions(
    approvals
      .command('show')
      .description('show one approval')
      .argument('<id>', 'the approval id')
      .option('--json', 'print JSON'),
  ).action(async (id, options) =>
    context.setExitCode(
      await runApprovalsShow(access(options), id, { json: options.json, print: context.print }),
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
        await runApprovalsAnswer(access(options), id, {
          approve: verb === 'approve',
          reason: options.reason,
          print: context.print,
        }),
      ),
    );
  }
}
