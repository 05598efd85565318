import {
  type Approval,
  type ApprovalResponse,
  approvalResponseSchema,
  CallgateError,
  isCallgateError,
} from '@callgate/protocol';
import { checkJsonValue, type JsonLimits } from '../json/safe-json.js';
import { argumentsDigestOf } from '../ledger/arguments-key.js';

/** How a pending approval ends. */
export interface Settlement {
  status: 'approved' | 'denied' | 'expired' | 'withdrawn';
  reviewer?: string;
  reason?: string | undefined;
  edited?: boolean;
  digest?: string;
  arguments?: Record<string, unknown> | undefined;
}

/**
 * A reviewer's answer, checked against the approval-response schema and, when it edits the
 * arguments, against `limits` (size and depth).
 *
 * @throws CallgateError `request-invalid` for a malformed response, naming the field.
 */
export function parseApprovalAnswer(response: ApprovalResponse, limits: JsonLimits): ApprovalResponse {
  const parsed = approvalResponseSchema.safeParse(response);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CallgateError(
      'request-invalid',
      `approval response: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  const answer = parsed.data;
  if (answer.arguments !== undefined) {
    try {
      checkJsonValue(answer.arguments, 'arguments', limits);
    } catch (error) {
      // The refusal names the value (`arguments.amount`): the path goes along, as other refusals'.
      const path =
        isCallgateError(error) && typeof error.details.path === 'string' ? error.details.path : 'arguments';
      throw new CallgateError('request-invalid', `approval response: ${(error as Error).message}`, { path });
    }
  }
  return answer;
}

/**
 * How `answer` settles the pending approval `current`. An edit of the arguments (`answer.arguments`
 * differing from the call's by digest) is recorded as an edit and counts as a denial unless
 * `allowEdits` (the policy's `approval.allowEdits`).
 */
export function answerSettlement(
  answer: ApprovalResponse,
  current: Approval,
  allowEdits: boolean,
): Settlement {
  let edited = false;
  let digest = current.arguments_digest;
  if (answer.arguments !== undefined) {
    const editedDigest = argumentsDigestOf(answer.arguments);
    edited = editedDigest !== current.arguments_digest;
    if (edited) digest = editedDigest;
  }
  let status: 'approved' | 'denied' = answer.approved ? 'approved' : 'denied';
  let reason = answer.reason;
  if (edited && status === 'approved' && !allowEdits) {
    status = 'denied';
    reason = `the reviewer edited the arguments, which this policy counts as a denial${reason ? `: ${reason}` : ''}`;
  }
  return {
    status,
    reviewer: answer.reviewer,
    reason,
    edited,
    digest: status === 'approved' ? digest : current.arguments_digest,
    arguments: edited && status === 'approved' ? answer.arguments : undefined,
  };
}
