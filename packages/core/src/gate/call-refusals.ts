import { type Approval, type ErrorBody, type ErrorKind, isCallgateError } from '@callgate/protocol';

/** A refusal as the model reads it: the `error` member of `{"error": {"kind", "message", ...}}`. */
export type Refusal = ErrorBody['error'];

/** The text a model reads as a refused call's result: `{"error": {...}}` as JSON. */
export function refusalText(error: Refusal): string {
  return JSON.stringify({ error });
}

const APPROVAL_REFUSALS: Record<string, ErrorKind> = {
  denied: 'approval-denied',
  expired: 'approval-expired',
  withdrawn: 'approval-expired',
  pending: 'approval-pending',
};

/** The refusal of an approval that did not end `approved` (or ended so without a grant). */
export function approvalRefusal(approval: Approval): Refusal {
  const why = approval.response_reason ? `: ${approval.response_reason}` : '';
  return {
    kind: APPROVAL_REFUSALS[approval.status] ?? 'grant-invalid',
    message: `approval ${approval.id} was ${approval.status}${why}`,
    approval_id: approval.id,
    call_id: approval.call_id,
  };
}

/** A thrown value as a refusal: a CallgateError's own body, anything else `fallback`. */
export function refusalOf(error: unknown, fallback: ErrorKind = 'gate-unavailable'): Refusal {
  if (isCallgateError(error)) return error.toBody().error;
  const message = error instanceof Error ? error.message : String(error);
  return {
    kind: fallback,
    message: fallback === 'gate-unavailable' ? `callgate could not be reached: ${message}` : message,
  };
}
