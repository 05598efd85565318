import { type Approval, CallgateClient, isCallgateError } from '@callgate/client';
import { formatDuration } from '@callgate/core';
import { exitCodeOfKind, refusalLine } from '../exit-codes.js';
import { table } from '../format.js';

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

async function guarded(name: string, warn: Print, action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (error) {
    if (!isCallgateError(error)) throw error;
    warn(refusalLine(`approvals ${name}`, error));
    return exitCodeOfKind(error.kind);
  }
}

/** `callgate approvals list [--status S] [--run ID] [--json]`: approvals oldest first. */
export function runApprovalsList(
  access: ServerAccess,
  options: { status?: string; run?: string; json?: boolean; print: Print; warn: Print },
): Promise<number> {
  return guarded('list', options.warn, async () => {
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
  options: { json?: boolean; print: Print; warn: Print },
): Promise<number> {
  return guarded('show', options.warn, async () => {
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
  options: { approve: boolean; reason?: string; print: Print; warn: Print },
): Promise<number> {
  return guarded(options.approve ? 'approve' : 'deny', options.warn, async () => {
    const api = client(access);
    const reason = options.reason ? { reason: options.reason } : {};
    const approval = options.approve ? await api.approve(id, reason) : await api.deny(id, reason);
    options.print(`${approval.id}: ${approval.status} by ${approval.reviewer ?? '—'} (${approval.tool})`);
    return approval.status === (options.approve ? 'approved' : 'denied') ? 0 : 1;
  });
}
