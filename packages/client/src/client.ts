import {
  type AnyBundle,
  type Approval,
  type ApprovalStatus,
  CallgateError,
  type CreateKeyRequest,
  errorBodySchema,
  type NewApiKey,
  type Outcome,
  type PolicyReloadAnswer,
  type ReloadPolicyRequest,
  type ToolSpec,
} from '@callgate/protocol';
import { context, propagation } from '@opentelemetry/api';
import { decodeAnswer, encodeBody } from './json.js';
import type {
  ApiKeyInfo,
  ApprovalState,
  CallRequest,
  CallSummary,
  ConsumedGrant,
  ConsumeGrantRequest,
  DecideResult,
  Health,
  MessageRequest,
  OutcomeRequest,
  OutcomeResult,
  Run,
  RunStartRequest,
  VerifyReport,
} from './types.js';

/** Options of {@link CallgateClient}. */
export interface CallgateClientOptions {
  /**
   * The server's base URL, `http://` or `https://` (e.g. `http://127.0.0.1:7420`). The client
   * speaks HTTP over TCP only: a `unix:` (or `http+unix:`) socket URL is refused, as is any other
   * scheme (CallgateError `request-invalid`).
   */
  url: string;
  /** An API key (`cg_…`); sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Longest wait for one request, ms, on top of any long-poll wait. Default 30,000. */
  timeoutMs?: number;
  /** The fetch to use. Default: the global one. */
  fetch?: typeof fetch;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'DELETE']);

/**
 * `text` when it is an `http:` or `https:` URL.
 * @throws CallgateError `request-invalid` naming the URL otherwise, with what to give instead.
 */
function serverUrl(text: string): string {
  let scheme: string;
  try {
    scheme = new URL(text).protocol;
  } catch {
    throw new CallgateError(
      'request-invalid',
      `url ${JSON.stringify(text)} is not a URL: give the server's http(s) URL, e.g. http://127.0.0.1:7420`,
      { url: text },
    );
  }
  if (scheme === 'http:' || scheme === 'https:') return text;
  if (scheme === 'unix:' || scheme.endsWith('+unix:'))
    throw new CallgateError(
      'request-invalid',
      `url ${text}: the TypeScript client speaks HTTP over TCP only, not a Unix-domain socket; serve callgate on a TCP port (callgate serve --port) and give its http:// URL`,
      { url: text },
    );
  throw new CallgateError(
    'request-invalid',
    `url ${text}: expected an http:// or https:// URL, e.g. http://127.0.0.1:7420`,
    { url: text },
  );
}

type Query = Record<string, string | number | boolean | undefined>;

interface RequestOptions {
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
  /** Extra time allowed for this request (long-poll), ms. */
  extraTimeMs?: number;
}

/**
 * A typed client of the callgate HTTP API (`/v1`). Every method resolves with the server's
 * answer and throws a {@link CallgateError} whose `kind` is the server's (`details.status`
 * holds the HTTP status). A server that cannot be reached is `gate-unavailable`.
 *
 * Bodies are written and answers read losslessly (see `encodeBody` and `decodeAnswer` in
 * json.ts): a `bigint` goes out with every digit and an answer's integer beyond ±(2^53−1) comes
 * back as a `bigint`; a value with no JSON form (NaN, Infinity, a lone surrogate, a cycle) is
 * refused before sending as `request-invalid` naming its path, except in a message's content or
 * a tool result, where the `callgate-normalize/1` marker the server would commit is sent instead.
 * An answer that is not valid JSON (or holds a duplicate key) is `internal`.
 */
export class CallgateClient {
  readonly url: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  /** @throws CallgateError `request-invalid` when `options.url` is not an http(s) URL. */
  constructor(options: CallgateClientOptions) {
    this.url = serverUrl(options.url).replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? fetch;
  }

  async #request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.url}/v1${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    // The caller's trace context (W3C traceparent), when the application runs an OpenTelemetry
    // SDK: callgate's spans then sit inside the caller's trace. A no-op without one.
    propagation.inject(context.active(), headers);
    // Refused here, naming the path, when the body has no JSON form: nothing is sent.
    const body = options.body === undefined ? undefined : encodeBody(options.body);
    const timeout = AbortSignal.timeout(this.#timeoutMs + (options.extraTimeMs ?? 0));
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const send = () =>
      this.#fetch(url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal,
      });
    let response: Response;
    try {
      try {
        response = await send();
      } catch (error) {
        // A kept-alive connection the server closed meanwhile fails at once; a read or a
        // delete is safe to send again, a decision or an answer is not.
        if (!IDEMPOTENT.has(method) || signal.aborted) throw error;
        response = await send();
      }
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const why = timeout.aborted ? `no answer within ${this.#timeoutMs} ms` : (error as Error).message;
      throw new CallgateError(
        'gate-unavailable',
        `cannot reach callgate at ${this.url}: ${why}`,
        {},
        { cause: error },
      );
    }
    const text = await response.text();
    // An answer is read losslessly (big integers keep their digits, a duplicate key is refused).
    if (response.ok) return decodeAnswer(text) as T;
    let value: unknown;
    try {
      value = decodeAnswer(text);
    } catch {
      value = undefined; // not callgate's error body (e.g. a proxy's page): judged by status
    }
    const parsed = errorBodySchema.safeParse(value);
    if (parsed.success) {
      const { kind, message, ...details } = parsed.data.error;
      throw new CallgateError(kind, message, { ...details, status: response.status });
    }
    const kind = response.status >= 502 && response.status <= 504 ? 'gate-unavailable' : 'internal';
    throw new CallgateError(kind, `callgate answered ${response.status} ${response.statusText}`.trim(), {
      status: response.status,
    });
  }

  /** `GET /v1/health` (no key needed). */
  health(): Promise<Health> {
    return this.#request('GET', '/health');
  }

  /** `GET /v1/openapi.json`: the API's OpenAPI 3.1 document. */
  openApi(): Promise<Record<string, unknown>> {
    return this.#request('GET', '/openapi.json');
  }

  /** `POST /v1/runs`: starts a run (its principal defaults to the key's name). */
  startRun(start: RunStartRequest): Promise<Run> {
    return this.#request('POST', '/runs', { body: start });
  }

  /** `GET /v1/runs`: runs newest first; `before` is an epoch-ms bound on `started_at`. */
  async listRuns(options: { limit?: number; before?: number } = {}): Promise<Run[]> {
    return (await this.#request<{ runs: Run[] }>('GET', '/runs', { query: options })).runs;
  }

  /** `GET /v1/runs/{id}`: a run and its calls. */
  getRun(runId: string): Promise<{ run: Run; calls: CallSummary[] }> {
    return this.#request('GET', `/runs/${encodeURIComponent(runId)}`);
  }

  /**
   * `POST /v1/runs/{id}/end`: ends a run (open calls are closed in the ledger). `outcomes` not
   * sent yet are recorded first, in order; the run's `outcomes` then say what became of each.
   */
  endRun(
    runId: string,
    status?: 'completed' | 'failed' | 'cancelled',
    options: { outcomes?: readonly OutcomeRequest[] } = {},
  ): Promise<Run & { outcomes?: OutcomeResult[] }> {
    return this.#request('POST', `/runs/${encodeURIComponent(runId)}/end`, {
      body: {
        ...(status ? { status } : {}),
        ...(options.outcomes?.length ? { outcomes: options.outcomes } : {}),
      },
    });
  }

  /**
   * `POST /v1/runs/{id}/decisions`: decides every call of one step before any runs. Allowed
   * calls come with a one-use grant; `tools` registers specs the server does not know yet.
   * `consume` spends each allowed call's grant with its decision (for calls run right after, in
   * this process: their verdicts say `grant_consumed`); `outcomes` (the previous step's, not
   * sent yet) are recorded in order before the calls are decided, and the result's `outcomes`
   * say what became of each. One request per step.
   */
  decide(
    runId: string,
    calls: readonly CallRequest[],
    options: {
      message?: MessageRequest;
      tools?: readonly ToolSpec[];
      consume?: boolean;
      outcomes?: readonly OutcomeRequest[];
    } = {},
  ): Promise<DecideResult> {
    return this.#request('POST', `/runs/${encodeURIComponent(runId)}/decisions`, {
      body: {
        calls,
        ...(options.message ? { message: options.message } : {}),
        ...(options.tools ? { tools: options.tools } : {}),
        ...(options.consume ? { consume: true } : {}),
        ...(options.outcomes?.length ? { outcomes: options.outcomes } : {}),
      },
    });
  }

  /** `POST /v1/runs/{id}/messages`: records a model message that asked for no tool call. */
  async recordMessage(runId: string, message: MessageRequest): Promise<void> {
    await this.#request('POST', `/runs/${encodeURIComponent(runId)}/messages`, { body: message });
  }

  /** `POST /v1/runs/{id}/outcomes`: records how a call ended; returns the outcome recorded. */
  async recordOutcome(runId: string, report: OutcomeRequest): Promise<Outcome> {
    return (
      await this.#request<{ outcome: Outcome }>('POST', `/runs/${encodeURIComponent(runId)}/outcomes`, {
        body: report,
      })
    ).outcome;
  }

  /** `POST /v1/runs/{id}/outcomes` with `{ outcomes }`: records several, in order; what became of each. */
  async recordOutcomes(runId: string, reports: readonly OutcomeRequest[]): Promise<OutcomeResult[]> {
    return (
      await this.#request<{ outcomes: OutcomeResult[] }>(
        'POST',
        `/runs/${encodeURIComponent(runId)}/outcomes`,
        {
          body: { outcomes: reports },
        },
      )
    ).outcomes;
  }

  /** `GET /v1/approvals`: approvals oldest first, by status and run. */
  async listApprovals(
    options: { status?: ApprovalStatus; run_id?: string; limit?: number } = {},
  ): Promise<Approval[]> {
    return (await this.#request<{ approvals: Approval[] }>('GET', '/approvals', { query: options }))
      .approvals;
  }

  /**
   * `GET /v1/approvals/{id}`: an approval, waiting up to `waitSeconds` (0–60) for its answer.
   * The grant is included only for the key that owns the run.
   */
  getApproval(
    approvalId: string,
    options: { waitSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<ApprovalState> {
    const wait = options.waitSeconds;
    return this.#request('GET', `/approvals/${encodeURIComponent(approvalId)}`, {
      ...(wait !== undefined ? { query: { wait }, extraTimeMs: wait * 1000 } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /**
   * Waits for an approval to be answered (or to expire), long-polling up to 60 s at a time,
   * for at most `timeoutMs` (default: until it leaves `pending`). Returns its last state.
   */
  async waitForApproval(
    approvalId: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<ApprovalState> {
    const deadline =
      options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      const waitSeconds = Math.max(0, Math.min(60, Math.ceil(left / 1000)));
      const state = await this.getApproval(approvalId, {
        waitSeconds,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (state.approval.status !== 'pending' || Date.now() >= deadline) return state;
    }
  }

  /** `POST /v1/approvals/{id}/approve` (reviewer or admin key). `arguments` is an edit. */
  async approve(
    approvalId: string,
    options: { reason?: string; arguments?: Record<string, unknown> } = {},
  ): Promise<Approval> {
    return (
      await this.#request<{ approval: Approval }>(
        'POST',
        `/approvals/${encodeURIComponent(approvalId)}/approve`,
        { body: options },
      )
    ).approval;
  }

  /** `POST /v1/approvals/{id}/deny` (reviewer or admin key). */
  async deny(approvalId: string, options: { reason?: string } = {}): Promise<Approval> {
    return (
      await this.#request<{ approval: Approval }>(
        'POST',
        `/approvals/${encodeURIComponent(approvalId)}/deny`,
        { body: options },
      )
    ).approval;
  }

  /**
   * `POST /v1/approvals/{id}/withdraw` (the agent key that owns the run, or admin): the caller
   * stopped waiting (time-out, cancellation); the approval ends as `withdrawn`.
   */
  async withdrawApproval(approvalId: string, options: { reason?: string } = {}): Promise<Approval> {
    return (
      await this.#request<{ approval: Approval }>(
        'POST',
        `/approvals/${encodeURIComponent(approvalId)}/withdraw`,
        {
          body: options,
        },
      )
    ).approval;
  }

  /** `POST /v1/grants/consume`: consumes a grant for exactly this call; `grant-invalid` otherwise. */
  consumeGrant(request: ConsumeGrantRequest): Promise<ConsumedGrant> {
    return this.#request('POST', '/grants/consume', { body: request });
  }

  /** `GET /v1/tools`: the tool specs the server knows. */
  async listTools(): Promise<ToolSpec[]> {
    return (await this.#request<{ tools: ToolSpec[] }>('GET', '/tools')).tools;
  }

  /**
   * `GET /v1/runs/{id}/bundle`: the run as a bundle: `callgate-bundle/3` (one batch inclusion
   * proof, a manifest signed by the log key), or with `proofs` `callgate-bundle/1` (one inclusion
   * proof per record). `revealRunKeys` adds the run's key (implied by `openings`).
   */
  exportRun(
    runId: string,
    options: { openings?: boolean; proofs?: boolean; revealRunKeys?: boolean } = {},
  ): Promise<AnyBundle> {
    const query = {
      ...(options.openings !== undefined ? { openings: options.openings } : {}),
      ...(options.proofs !== undefined ? { proofs: options.proofs } : {}),
      ...(options.revealRunKeys ? { reveal_run_keys: true } : {}),
    };
    return this.#request('GET', `/runs/${encodeURIComponent(runId)}/bundle`, {
      ...(Object.keys(query).length > 0 ? { query } : {}),
    });
  }

  /** `POST /v1/verify`: verifies a bundle against the server's log key (or `publicKey`). */
  verify(
    bundle: unknown,
    options: { strict?: boolean; expectSize?: number; publicKey?: string } = {},
  ): Promise<VerifyReport> {
    return this.#request('POST', '/verify', {
      body: bundle,
      query: { strict: options.strict, expect_size: options.expectSize, public_key: options.publicKey },
    });
  }

  /** `GET /v1/keys` (admin). */
  async listKeys(): Promise<ApiKeyInfo[]> {
    return (await this.#request<{ keys: ApiKeyInfo[] }>('GET', '/keys')).keys;
  }

  /** `POST /v1/keys` (admin): the key's text is in the answer, once. */
  createKey(request: CreateKeyRequest): Promise<NewApiKey> {
    return this.#request('POST', '/keys', { body: request });
  }

  /**
   * `POST /v1/admin/policy` (admin): puts a new policy in force (validated, then recorded in the
   * ledger). Without `policy` (YAML text) the server reads its policy file again.
   * @throws CallgateError `policy-invalid` naming the rule and line:column; the old policy stays.
   */
  reloadPolicy(request: ReloadPolicyRequest = {}): Promise<PolicyReloadAnswer> {
    return this.#request('POST', '/admin/policy', { body: request });
  }

  /** `DELETE /v1/keys/{name}` (admin). */
  async revokeKey(name: string): Promise<void> {
    await this.#request('DELETE', `/keys/${encodeURIComponent(name)}`);
  }
}
