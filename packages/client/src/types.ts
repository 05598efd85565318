// The shapes the callgate HTTP API sends and accepts (GET /v1/openapi.json describes the same).
import type { Approval, Decision, ErrorBody, ErrorKind, Grant, Outcome, ToolSpec } from '@callgate/protocol';

/** A run. Times are epoch milliseconds. */
export interface Run {
  run_id: string;
  principal: string;
  framework: string;
  labels: Record<string, string>;
  parent_run_id?: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  started_at: number;
  ended_at?: number;
}

/** What starts a run; `principal` defaults to the API key's name. */
export interface RunStartRequest {
  framework: string;
  principal?: string;
  labels?: Record<string, string>;
  parent_run_id?: string;
}

/** One attempt of one call, as the server tracks it. */
export interface CallSummary {
  run_id: string;
  call_id: string;
  attempt: number;
  minted: boolean;
  tool: string;
  arguments_digest: string | null;
  decision: 'allow' | 'deny' | 'ask' | 'refused';
  rules: string[];
  approval_id?: string;
  outcome?: Outcome;
  decided_at: number;
  ended_at?: number;
}

/** A tool call as the model asked for it (`arguments`: an object or JSON text of one). */
export interface CallRequest {
  id?: string | null;
  tool: string;
  arguments: unknown;
  /** Consume this call's grant with its decision when allowed (overrides the request's `consume`). */
  consume?: boolean;
}

/** A model message: its content is committed in the ledger, never stored there. */
export interface MessageRequest {
  role: string;
  content?: unknown;
}

/**
 * The gate's answer for one call: `allowed` (run it with `arguments`, consuming `grant`),
 * `pending` (wait for `approval`), or `refused` (`error` is the call's result for the model).
 */
export interface Verdict {
  call_id: string;
  minted: boolean;
  attempt: number;
  tool: string;
  status: 'allowed' | 'pending' | 'refused';
  arguments?: Record<string, unknown>;
  arguments_digest?: string;
  decision?: Decision;
  approval?: Approval;
  grant?: Grant;
  /** The grant was consumed with the decision (`consume`): it is already spent. */
  grant_consumed?: boolean;
  error?: ErrorBody['error'];
  provenance?: { untrusted: boolean; sources: string[] };
}

/** What became of one outcome a request carried: the outcome recorded, or why it was not. */
export interface OutcomeResult {
  call_id: string;
  outcome?: Outcome;
  error?: ErrorBody['error'];
}

/** A step's decisions, and what became of the outcomes the request carried (in order). */
export interface DecideResult {
  run_id: string;
  verdicts: Verdict[];
  outcomes?: OutcomeResult[];
}

/** How a call ended, as reported by whoever ran it. */
export interface OutcomeRequest {
  call_id: string;
  attempt?: number;
  outcome: Outcome;
  result?: unknown;
  error_kind?: ErrorKind;
  tool?: string;
  arguments?: unknown;
  duration_ms?: number;
  grant_consumed?: boolean;
}

/** An approval and, for the key that owns its run once approved, the grant and arguments to run. */
export interface ApprovalState {
  approval: Approval;
  grant?: Grant;
  arguments?: Record<string, unknown>;
}

/** A grant to consume, with the arguments the tool will run with (or their digest). */
export type ConsumeGrantRequest = {
  token: string;
  run_id: string;
  call_id: string;
  tool: string;
} & ({ arguments: unknown; arguments_digest?: never } | { arguments_digest: string; arguments?: never });

/** A consumed grant. */
export interface ConsumedGrant {
  consumed: true;
  run_id: string;
  call_id: string;
  tool: string;
  arguments_digest: string;
  expires_at: number;
}

/** The verifier's report on a bundle. */
export interface VerifyReport {
  ok: boolean;
  failures: { check: string; message: string; seq?: number; run_id?: string; type?: string }[];
  warnings: string[];
  records: number;
  checkpoints: number;
}

export type ApiKeyRole = 'agent' | 'reviewer' | 'admin';

/** An API key as listed (never its text or hash). */
export interface ApiKeyInfo {
  name: string;
  role: ApiKeyRole;
  created_at: number;
  revoked_at?: number;
}

/** The server's health. */
export interface Health {
  /** `degraded` when a health check found a problem (listed in `problems`). */
  status: 'ok' | 'degraded' | 'draining';
  version: string;
  /** The log's verifier key (servers that report it): pin it with `callgate verify --public-key`. */
  log_key?: string;
  problems?: { check: string; message: string }[];
}

export type { ToolSpec };
