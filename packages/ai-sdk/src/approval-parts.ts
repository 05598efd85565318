// Reading the AI SDK's tool approval request and response parts (ai 7: `tool-approval-request`
// in assistant content and results, `tool-approval-response` in tool messages).
import type { ModelMessage } from 'ai';

/** A `tool-approval-request` part, from a result's content or from an assistant message. */
export interface ApprovalRequestPart {
  type: 'tool-approval-request';
  approvalId: string;
  /** Present on parts of a result's content. */
  toolCall?: { toolCallId: string; toolName: string; input: unknown };
  /** Present on parts of an assistant message. */
  toolCallId?: string;
  reason?: string;
  isAutomatic?: boolean;
}

/**
 * The reason of an SDK approval request for callgate approval `approvalId`: the policy's reason,
 * naming the approval for the person reading it (adapters find the approval by run and call id,
 * never by reading this text).
 */
export function requestReason(reason: string, approvalId: string): string {
  return `${reason} (callgate approval ${approvalId})`;
}

export function isApprovalRequest(part: unknown): part is ApprovalRequestPart {
  return (
    typeof part === 'object' &&
    part !== null &&
    (part as { type?: unknown }).type === 'tool-approval-request' &&
    typeof (part as { approvalId?: unknown }).approvalId === 'string'
  );
}

/** The id of the tool call an approval request part is for. */
export function requestToolCallId(part: ApprovalRequestPart): string {
  return part.toolCall?.toolCallId ?? part.toolCallId ?? '';
}

/**
 * The approval request an approved `tool-approval-response` in the last message answers for
 * `toolCallId`: what the SDK re-validates before running a call approved in an earlier turn.
 * Undefined when the call is not such a resumed call.
 */
export function approvedRequestFor(
  messages: readonly ModelMessage[],
  toolCallId: string,
): ApprovalRequestPart | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'tool' || typeof last.content === 'string') return undefined;
  const approved = new Set<string>();
  for (const part of last.content) {
    if (part.type === 'tool-approval-response' && part.approved) approved.add(part.approvalId);
    if (part.type === 'tool-result' && part.toolCallId === toolCallId) return undefined;
  }
  if (approved.size === 0) return undefined;
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (isApprovalRequest(part) && approved.has(part.approvalId) && requestToolCallId(part) === toolCallId)
        return part;
    }
  }
  return undefined;
}
