// In-app approvals: a chat app's own approval UI (useChat's `tool-approval-request` →
// `addToolApprovalResponse` → `tool-approval-response`) answering callgate's approvals as the
// signed-in user. The route handler forwards each answer the request carries to callgate with
// that user's reviewer key, before the SDK sees the messages; the SDK then re-validates the
// approved call, and the gate clears it only if callgate's approval says so.
import type { ApprovalAnswerer, Governor } from '@callgate/core/adapter';
import { isCallgateError } from '@callgate/protocol';
import type { ModelMessage } from 'ai';
import { isApprovalRequest, requestToolCallId } from './approval-parts.js';

/** One answer forwarded to callgate. */
export interface ForwardedAnswer {
  /** callgate's approval. */
  approvalId: string;
  /** The SDK's approval id (the `tool-approval-response` it came from). */
  sdkApprovalId: string;
  toolCallId: string;
  approved: boolean;
}

/**
 * Forwards the `tool-approval-response` parts of the last message (a `tool` message, as
 * `convertToModelMessages` makes it from useChat's answers) as answers to the callgate approvals
 * of run `runId` that their requests stand for, found by run and call id. Answers for calls
 * callgate asked nothing about, or whose approval is no longer pending, are left out (an
 * approval keeps its first answer). Returns what was forwarded.
 * @throws CallgateError from `reviewer` (e.g. `forbidden` for a key that may not review).
 */
export async function forwardApprovalResponses(
  messages: readonly ModelMessage[],
  options: { governor: Governor; runId: string; reviewer: ApprovalAnswerer },
): Promise<ForwardedAnswer[]> {
  const last = messages.at(-1);
  if (last?.role !== 'tool' || typeof last.content === 'string') return [];
  const requests = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content)
      if (isApprovalRequest(part)) requests.set(part.approvalId, requestToolCallId(part));
  }
  const forwarded: ForwardedAnswer[] = [];
  for (const part of last.content) {
    if (part.type !== 'tool-approval-response') continue;
    const toolCallId = requests.get(part.approvalId);
    if (!toolCallId) continue;
    const approval = await options.governor.findApproval(options.runId, toolCallId);
    if (approval?.status !== 'pending') continue;
    const reason = part.reason !== undefined ? { reason: part.reason } : {};
    try {
      if (part.approved) await options.reviewer.approve(approval.id, reason);
      else await options.reviewer.deny(approval.id, reason);
    } catch (error) {
      if (isCallgateError(error) && error.kind === 'conflict') continue; // answered meanwhile
      throw error;
    }
    forwarded.push({
      approvalId: approval.id,
      sdkApprovalId: part.approvalId,
      toolCallId,
      approved: part.approved,
    });
  }
  return forwarded;
}
