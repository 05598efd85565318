import { z } from 'zod';

/**
 * The closed list of error kinds. Every refusal and failure callgate reports carries exactly one
 * of these, on every surface: TypeScript (`CallgateError.kind`), HTTP bodies, MCP tool results
 * and the Python package's exception tree.
 */
export const ERROR_KINDS = [
  'tool-args-invalid',
  'tool-not-found',
  'policy-denied',
  'approval-denied',
  'approval-pending',
  'approval-expired',
  'grant-invalid',
  'guardrail-blocked',
  'run-limit-exceeded',
  'idempotency-blocked',
  'gate-unavailable',
  'tool-error',
  // Request-level kinds used by servers and stores (never a tool call's own refusal).
  'request-invalid',
  'policy-invalid',
  'unauthorized',
  'forbidden',
  'not-found',
  'conflict',
  'ledger-invalid',
  'internal',
  // The store cannot write (disk full, I/O error): the server keeps answering, writes resume by
  // themselves once the store can write again.
  'store-unavailable',
] as const;

/** One error kind from {@link ERROR_KINDS}. */
export type ErrorKind = (typeof ERROR_KINDS)[number];

export const errorKindSchema = z.enum(ERROR_KINDS);

/**
 * The body of every refusal: `{"error": {"kind", "message", ...details}}`. This is what a model
 * reads as a refused call's tool result and what the HTTP API returns for a 4xx or 5xx.
 */
export const errorBodySchema = z.object({
  error: z
    .object({
      kind: errorKindSchema,
      message: z.string(),
      approval_id: z.string().optional(),
      call_id: z.string().optional(),
      rules: z.array(z.string()).optional(),
      path: z.string().optional(),
    })
    .catchall(z.unknown()),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** Extra fields an error may carry beside its kind and message (e.g. `approval_id`, `path`). */
export type ErrorDetails = Record<string, unknown>;

/**
 * The one error type of callgate. `kind` is stable and machine-readable; `message` says what was
 * wrong and where, for a person or a model to read; `details` carries structured extras such as
 * the approval id or the JSON path of an offending value.
 */
export class CallgateError extends Error {
  readonly kind: ErrorKind;
  readonly details: ErrorDetails;

  constructor(kind: ErrorKind, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CallgateError';
    this.kind = kind;
    this.details = details;
  }

  /** The wire shape `{"error": {"kind", "message", ...details}}`. */
  toBody(): ErrorBody {
    return { error: { ...this.details, kind: this.kind, message: this.message } };
  }
}

/** True when `value` is a {@link CallgateError} (also across module copies). */
export function isCallgateError(value: unknown): value is CallgateError {
  return (
    value instanceof CallgateError ||
    (value instanceof Error &&
      value.name === 'CallgateError' &&
      typeof (value as { kind?: unknown }).kind === 'string')
  );
}

/** Builds the refusal body for `kind` and `message` without an exception. */
export function errorBody(kind: ErrorKind, message: string, details: ErrorDetails = {}): ErrorBody {
  return { error: { ...details, kind, message } };
}
