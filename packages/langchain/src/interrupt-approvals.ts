// Asks as LangGraph interrupts: the `approvals: 'interrupt'` mode of the callgate middleware.
// After a model call, the step's calls that wait for a person pause the graph with `interrupt()`,
// its payload shaped like `humanInTheLoopMiddleware`'s (`HITLRequest`), each action naming its
// callgate approval. The graph's checkpointer keeps the pause; `Command({ resume })` with a
// `HITLResponse` answers it, and each decision is answered in callgate by the reviewer the app
// signed in. The tool calls then run or are refused as callgate's approvals say.
import type { ApprovalAnswerer, GovernedCall, GovernedCalls } from '@callgate/core/adapter';
import { isCallgateError } from '@callgate/protocol';
import { interrupt } from '@langchain/langgraph';
import type { HITLRequest, HITLResponse } from 'langchain';

type ToolCallLike = { id?: string; name: string; args: unknown };

/** An action of the interrupt's payload: `humanInTheLoopMiddleware`'s, with its callgate approval. */
export type CallgateActionRequest = HITLRequest['actionRequests'][number] & {
  /** The callgate approval this action stands for. */
  approvalId: string;
  /** callgate's id of the call. */
  callId: string;
};

/** The payload of a callgate interrupt: a `HITLRequest` whose actions name their approvals. */
export interface CallgateInterrupt extends HITLRequest {
  actionRequests: CallgateActionRequest[];
}

/** The calls among `toolCalls` waiting for a person, found in `calls` or, resumed elsewhere, in callgate. */
async function pendingCalls(calls: GovernedCalls, toolCalls: readonly ToolCallLike[]) {
  const pending: { call: GovernedCall; toolCall: ToolCallLike; reason: string }[] = [];
  for (const toolCall of toolCalls) {
    const key = toolCall.id ?? '';
    if (key === '') continue;
    const known = calls.all(key);
    let call = known.find(
      (candidate) => !candidate.ended && candidate.status === 'pending' && !candidate.grant,
    );
    let reason = call?.verdict?.approval?.reason;
    if (!call && known.length === 0) {
      // Resumed from the checkpoint by another process: the approval callgate asked for the call.
      const approval = await calls.governor.findApproval(calls.runId, key);
      if (approval?.status === 'pending') {
        call = calls.adopt(key, toolCall.name, approval.id);
        reason = approval.reason;
      }
    }
    if (call?.approvalId) pending.push({ call, toolCall, reason: reason ?? 'callgate asks a person' });
  }
  return pending;
}

/**
 * Pauses the graph for the step's calls that wait for a person (none: returns at once), then
 * answers each decision of the resume in callgate as `reviewer`: `approve` approves, `edit`
 * approves with the edited arguments (callgate counts that as a denial unless the policy allows
 * edits; a changed tool name is a denial), `reject` denies with its message as the reason.
 * An approval answered meanwhile (e.g. in callgate's inbox) keeps that answer.
 * @throws Error when the resume is not a `HITLResponse` with one decision per action.
 */
export async function askByInterrupt(
  calls: GovernedCalls,
  toolCalls: readonly ToolCallLike[],
  reviewer: ApprovalAnswerer,
): Promise<void> {
  const pending = await pendingCalls(calls, toolCalls);
  if (pending.length === 0) return;
  const request: CallgateInterrupt = {
    actionRequests: pending.map(({ call, toolCall, reason }) => ({
      name: toolCall.name,
      args: (toolCall.args ?? {}) as Record<string, unknown>,
      description: `${reason}\n\nTool: ${toolCall.name}\nArgs: ${JSON.stringify(toolCall.args, null, 2)}\n\ncallgate approval ${call.approvalId}`,
      approvalId: call.approvalId as string,
      callId: call.callId,
    })),
    reviewConfigs: pending.map(({ toolCall }) => ({
      actionName: toolCall.name,
      allowedDecisions: ['approve', 'edit', 'reject'],
    })),
  };
  const response = interrupt<CallgateInterrupt, HITLResponse>(request);
  const decisions = response?.decisions;
  if (!Array.isArray(decisions) || decisions.length !== pending.length) {
    throw new Error(
      `resume: expected a HITLResponse with ${pending.length} decision(s) ({ decisions: [...] }), one per action of the interrupt`,
    );
  }
  await Promise.all(
    pending.map(async ({ call, toolCall }, index) => {
      const decision = decisions[index] as HITLResponse['decisions'][number];
      const approvalId = call.approvalId as string;
      try {
        if (decision.type === 'approve') await reviewer.approve(approvalId);
        else if (decision.type === 'edit' && decision.editedAction.name === toolCall.name) {
          await reviewer.approve(approvalId, { arguments: decision.editedAction.args });
        } else if (decision.type === 'edit') {
          await reviewer.deny(approvalId, {
            reason: `the reviewer changed the tool to ${decision.editedAction.name}, which callgate cannot do`,
          });
        } else if (decision.type === 'reject') {
          await reviewer.deny(approvalId, decision.message !== undefined ? { reason: decision.message } : {});
        } else {
          throw new Error(
            `resume: decision ${index} has unknown type ${JSON.stringify((decision as { type?: unknown }).type)}`,
          );
        }
      } catch (error) {
        if (!(isCallgateError(error) && error.kind === 'conflict')) throw error;
      }
    }),
  );
}
