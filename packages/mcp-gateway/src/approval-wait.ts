// Waiting for a person while the client waits: an `ask` is answered through MCP elicitation
// when the client offers it, and always through the engine's approvals (inbox, API, ports);
// progress notifications keep the client's request alive meanwhile. A client that cancels or
// disconnects withdraws the approval.
import { truncateText } from '@callgate/core';
import type { Approval } from '@callgate/protocol';
import { ElicitResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra } from './context.js';
import type { GatewaySession } from './session.js';

type ApprovalState = Awaited<ReturnType<GatewaySession['context']['engine']['approval']>>;

/**
 * Relays progress to the client's `progressToken` (MCP progress utility): ticks while the call
 * waits for an approval, then the upstream's own progress, shifted past the ticks so that
 * values keep increasing.
 */
export class ProgressRelay {
  readonly #extra: RequestExtra;
  readonly #token: string | number | undefined;
  #ticks = 0;

  constructor(extra: RequestExtra) {
    this.#extra = extra;
    const token = extra._meta?.progressToken;
    this.#token = typeof token === 'string' || typeof token === 'number' ? token : undefined;
  }

  /** True when the client asked for progress. */
  get wanted(): boolean {
    return this.#token !== undefined;
  }

  #send(progress: number, total: number | undefined, message: string | undefined): void {
    if (this.#token === undefined) return;
    this.#extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: this.#token,
          progress,
          ...(total !== undefined ? { total } : {}),
          ...(message !== undefined ? { message } : {}),
        },
      })
      .catch(() => {});
  }

  /** One tick while waiting (progress 1, 2, 3, ... with no total). */
  tick(message: string): void {
    this.#ticks++;
    this.#send(this.#ticks, undefined, message);
  }

  /** The upstream's progress, shifted past the waiting ticks. */
  forward(progress: Progress): void {
    const offset = this.#ticks > 0 ? this.#ticks + 1 : 0;
    this.#send(
      offset + progress.progress,
      progress.total !== undefined ? offset + progress.total : undefined,
      progress.message,
    );
  }
}

const MAX_SHOWN_ARGUMENTS = 2_000;

function elicitationMessage(approval: Approval): string {
  let shown = JSON.stringify(approval.arguments ?? {}, null, 2);
  shown = truncateText(shown, MAX_SHOWN_ARGUMENTS, '\n… (truncated)');
  return `callgate: the call to ${approval.tool} needs your approval — ${approval.reason}\n\nArguments:\n${shown}`;
}

const REQUESTED_SCHEMA = {
  type: 'object' as const,
  properties: {
    approve: {
      type: 'boolean' as const,
      title: 'Approve this call',
      description: 'Yes runs the call once, exactly as shown.',
    },
    reason: {
      type: 'string' as const,
      title: 'Reason',
      description: 'Why (optional; recorded in the ledger).',
    },
  },
  required: ['approve'],
};

/**
 * Asks the person at the client through `elicitation/create` (MCP 2025-11-25, form mode) and
 * records the answer as an approval response by `<principal> (elicitation)`: accept with
 * `approve` → approved or denied; decline → denied; cancel → withdrawn. Errors (a client that
 * cannot answer, a time-out) leave the approval pending for the other approval routes.
 */
async function elicit(
  session: GatewaySession,
  approval: Approval,
  extra: RequestExtra,
  signal: AbortSignal,
): Promise<void> {
  const { engine, logger } = session.context;
  const reviewer = `${session.principal} (elicitation)`;
  let answer: { action: string; content?: Record<string, unknown> };
  try {
    answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: { message: elicitationMessage(approval), requestedSchema: REQUESTED_SCHEMA },
      },
      ElicitResultSchema,
      { signal, timeout: Math.max(1, approval.expires_at - Date.now()) },
    );
  } catch (error) {
    if (!signal.aborted) logger.debug({ approval: approval.id, error: String(error) }, 'elicitation failed');
    return;
  }
  if (signal.aborted) return;
  try {
    if (answer.action === 'accept') {
      const approved = answer.content?.approve === true;
      const reason =
        typeof answer.content?.reason === 'string' && answer.content.reason
          ? answer.content.reason
          : undefined;
      await engine.respondToApproval(approval.id, { approved, reviewer, ...(reason ? { reason } : {}) });
    } else if (answer.action === 'decline') {
      await engine.respondToApproval(approval.id, {
        approved: false,
        reviewer,
        reason: 'declined through elicitation',
      });
    } else {
      await engine.withdrawApproval(approval.id, 'the person dismissed the approval request');
    }
  } catch (error) {
    // Answered elsewhere first (a `conflict`): the waiting loop reads the answer that won.
    logger.debug({ approval: approval.id, error: String(error) }, 'elicitation answer not recorded');
  }
}

/**
 * Waits for `approval` to be answered, up to its wait limit: through elicitation when the
 * client offers it and, in any case, on the engine (long-poll in steps of the progress
 * interval, a progress tick after each step). When `signal` aborts (the client cancelled or
 * disconnected) the approval is withdrawn.
 *
 * @returns the approval's final state (approved with its grant, denied, expired or withdrawn).
 */
export async function awaitApproval(
  session: GatewaySession,
  approval: Approval,
  extra: RequestExtra,
  signal: AbortSignal,
  progress: ProgressRelay,
): Promise<ApprovalState> {
  const { engine, progressIntervalMs } = session.context;
  const asking = new AbortController();
  const elicitation = session.canElicit
    ? elicit(session, approval, extra, AbortSignal.any([signal, asking.signal]))
    : undefined;
  try {
    let state = await engine.approval(approval.id);
    while (state.approval.status === 'pending' && !signal.aborted) {
      const left = approval.expires_at - Date.now();
      state = await engine.approval(approval.id, {
        waitMs: Math.max(1, Math.min(progressIntervalMs, left + 25)),
        signal,
      });
      if (state.approval.status === 'pending' && !signal.aborted) {
        progress.tick(`waiting for approval ${approval.id}: ${approval.reason}`);
      }
    }
    if (state.approval.status === 'pending') {
      state =
        (await engine.withdrawApproval(approval.id, 'the client cancelled or disconnected')) ??
        (await engine.approval(approval.id));
    }
    return state;
  } finally {
    asking.abort();
    await elicitation;
  }
}
