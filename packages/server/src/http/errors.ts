// The one place where callgate's error kinds become HTTP statuses. Every 4xx and 5xx the server
// sends is built here, as `{"error": {"kind", "message", ...details}}`; the status comes from
// the kind, except 405 (see methodNotAllowedResponse).
import type { Logger } from '@callgate/core';
import { CallgateError, type ErrorBody, type ErrorKind, isCallgateError } from '@callgate/protocol';

/** The HTTP status of each error kind. A kind that is a tool call's own refusal (e.g. `policy-denied`)
 * is normally returned inside a 200 verdict; the status applies when it ends a whole request. */
export const HTTP_STATUS_OF_KIND = {
  'tool-args-invalid': 400,
  'tool-not-found': 404,
  'policy-denied': 403,
  'approval-denied': 403,
  'approval-pending': 409,
  'approval-expired': 409,
  'grant-invalid': 409,
  'guardrail-blocked': 400,
  'run-limit-exceeded': 409,
  'idempotency-blocked': 409,
  'gate-unavailable': 503,
  'tool-error': 502,
  'request-invalid': 400,
  'policy-invalid': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  'ledger-invalid': 500,
  internal: 500,
  'store-unavailable': 503,
} as const satisfies Record<ErrorKind, number>;

/** An HTTP status the server answers errors with. */
export type ErrorStatus = (typeof HTTP_STATUS_OF_KIND)[ErrorKind];

/** The HTTP status for `kind` (500 for a kind this server does not know). */
export function httpStatusOf(kind: ErrorKind): ErrorStatus {
  return HTTP_STATUS_OF_KIND[kind] ?? 500;
}

/**
 * The status and body for any thrown value. A {@link CallgateError} keeps its kind, message and
 * details; anything else becomes `internal` with a generic message (the cause is logged, never
 * sent: it may hold paths or values a caller should not see).
 */
export function errorResponseOf(error: unknown, logger: Logger): { status: ErrorStatus; body: ErrorBody } {
  if (isCallgateError(error)) {
    const status = httpStatusOf(error.kind);
    if (status >= 500) logger.error({ kind: error.kind, error: error.message }, 'request failed');
    return { status, body: (error as CallgateError).toBody() };
  }
  logger.error(
    { error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
    'request failed',
  );
  return {
    status: 500,
    body: new CallgateError('internal', 'the server failed to handle the request').toBody(),
  };
}

/**
 * The one answer whose status is not its kind's: a path the API serves, asked with a method it
 * does not serve there. RFC 9110 §15.5.6 calls for 405 with an `Allow` header listing the
 * methods that are served; the kind is `request-invalid` (protocol has no narrower one), whose
 * table status (400) would hide that the path exists.
 *
 * @param method the request's method (`DELETE`).
 * @param path the request's path (`/v1/runs`).
 * @param allowed the methods served at `path`, upper case, in the order to list them.
 */
export function methodNotAllowedResponse(
  method: string,
  path: string,
  allowed: readonly string[],
): { status: 405; body: ErrorBody; headers: { Allow: string } } {
  const list = allowed.join(', ');
  const error = new CallgateError(
    'request-invalid',
    `method ${method} is not allowed on ${path}; allowed: ${list}`,
  );
  return { status: 405, body: error.toBody(), headers: { Allow: list } };
}
