// The Governor of a callgate server: what the TypeScript adapters talk to in remote mode. It has
// the shape of `Governor` from @callgate/core (adapters take either), over the HTTP API, with
// one request per step on the allow path: a decision consumes its grants, and a step's outcomes
// ride with the run's next decisions request (or its end).
import {
  type Approval,
  CallgateError,
  type Grant,
  isCallgateError,
  type Outcome,
  type ToolSpec,
} from '@callgate/protocol';
import type { CallgateClient } from './client.js';
import type {
  ApprovalState,
  CallRequest,
  MessageRequest,
  OutcomeRequest,
  RunStartRequest,
  Verdict,
} from './types.js';

/** What a grant is bound to (the same fields as core's `GrantBinding`). */
export interface GrantBinding {
  run_id: string;
  call_id: string;
  tool: string;
  arguments_digest: string;
}

/**
 * A callgate server seen as a `Governor` (the interface of @callgate/core the adapters use).
 * Every method throws the server's `CallgateError` (`gate-unavailable` when it cannot be reached).
 */
export interface RemoteGovernor {
  /** `POST /v1/runs`. Without `principal` the run acts under the API key's name (agent keys always do). */
  startRun(start: RunStartRequest): Promise<{ run_id: string }>;
  /**
   * `POST /v1/runs/:id/decisions`: one verdict per call, in order. Each allowed call's grant is
   * consumed with its decision (the adapter runs the call right after, so `consumeGrant` of it
   * is then answered here, without a request), and the request carries the run's outcomes not
   * sent yet (recorded by the server in order, before the decisions).
   */
  decide(
    runId: string,
    calls: readonly CallRequest[],
    options?: { message?: MessageRequest; tools?: ToolSpec[] },
  ): Promise<Verdict[]>;
  /** `GET /v1/approvals/:id?wait=<s>`, long-polling up to `waitMs` in all. */
  awaitApproval(
    approvalId: string,
    options: { waitMs: number; signal?: AbortSignal },
  ): Promise<ApprovalState>;
  /**
   * `POST /v1/approvals/:id/withdraw`: the adapter stopped waiting. An approval that is no
   * longer pending (answered or expired meanwhile) is left as it is.
   */
  withdrawApproval(approvalId: string, reason?: string): Promise<void>;
  /**
   * `GET /v1/approvals?run_id=`: the newest approval asked for call `callId` of run `runId`
   * (any status), or undefined. An agent key sees the approvals of its own runs only.
   */
  findApproval(runId: string, callId: string): Promise<Approval | undefined>;
  /**
   * Consumes a grant: one consumed with its decision is spent here, once, for exactly its call;
   * any other goes to `POST /v1/grants/consume`. Resolves with nothing; throws `grant-invalid` on
   * any mismatch, reuse or expiry.
   */
  consumeGrant(token: string, binding: GrantBinding): Promise<undefined>;
  /**
   * Keeps a call's outcome for the run's next decisions request or its end (one request per
   * step): resolves at once with the outcome as reported. Not acknowledged by the server until
   * then; {@link flush} sends what is kept.
   */
  recordOutcome(runId: string, report: OutcomeRequest): Promise<Outcome>;
  /** `POST /v1/runs/:id/messages`. */
  recordMessage(runId: string, message: MessageRequest): Promise<void>;
  /** `POST /v1/runs/:id/end`, carrying the run's outcomes not sent yet. */
  endRun(runId: string, status?: 'completed' | 'failed' | 'cancelled'): Promise<void>;
  /** Sends every outcome kept (one `POST /v1/runs/:id/outcomes` per run); resolves once recorded. */
  flush(): Promise<void>;
}

type Client = Pick<
  CallgateClient,
  | 'startRun'
  | 'decide'
  | 'getApproval'
  | 'waitForApproval'
  | 'withdrawApproval'
  | 'listApprovals'
  | 'consumeGrant'
  | 'recordOutcome'
  | 'recordOutcomes'
  | 'recordMessage'
  | 'endRun'
>;

const BINDING_FIELDS = ['run_id', 'call_id', 'tool', 'arguments_digest'] as const;

/**
 * The Governor of the server `client` talks to, for the adapters' remote mode:
 *
 * ```ts
 * const client = new CallgateClient({ url: 'http://127.0.0.1:7420', apiKey: process.env.CALLGATE_KEY });
 * const gate = await createAiSdkGate({ governor: remoteGovernor(client) });
 * ```
 *
 * Use an `agent` key: it starts runs and sees the grants of its own runs; it can never approve.
 */
export function remoteGovernor(client: Client): RemoteGovernor {
  /** Outcomes not sent yet, by run, in order. */
  const held = new Map<string, OutcomeRequest[]>();
  /** Grants consumed with their decision, by token, not yet claimed by `consumeGrant`. */
  const spent = new Map<string, Grant>();

  const take = (runId: string): OutcomeRequest[] => {
    const reports = held.get(runId) ?? [];
    held.delete(runId);
    return reports;
  };
  const giveBack = (runId: string, reports: OutcomeRequest[]) => {
    if (reports.length > 0) held.set(runId, [...reports, ...(held.get(runId) ?? [])]);
  };
  /** A batch refused as a whole (e.g. a result the server cannot take): one request each, a result it refuses dropped. */
  const recordEach = async (runId: string, reports: OutcomeRequest[]) => {
    for (const report of reports) {
      try {
        await client.recordOutcome(runId, report);
      } catch (error) {
        if (isCallgateError(error) && error.kind === 'conflict') continue;
        if (!(isCallgateError(error) && error.kind === 'request-invalid') || report.result === undefined)
          throw error;
        const { result: _, ...bare } = report;
        await client.recordOutcome(runId, bare);
      }
    }
  };
  /** Sends `reports` with `send`; when the server cannot be reached they are kept for the next request. */
  async function carrying<T>(runId: string, send: (reports: OutcomeRequest[]) => Promise<T>): Promise<T> {
    const reports = take(runId);
    try {
      return await send(reports);
    } catch (error) {
      if (reports.length === 0) throw error;
      if (isCallgateError(error) && error.kind === 'gate-unavailable') {
        giveBack(runId, reports);
        throw error;
      }
      if (!(isCallgateError(error) && error.kind === 'request-invalid')) throw error;
      await recordEach(runId, reports);
      return send([]);
    }
  }

  return {
    async startRun(start) {
      const run = await client.startRun(start);
      return { run_id: run.run_id };
    },
    async decide(runId, calls, options = {}) {
      const result = await carrying(runId, (outcomes) =>
        client.decide(runId, calls, {
          ...(options.message ? { message: options.message } : {}),
          ...(options.tools ? { tools: options.tools } : {}),
          consume: true,
          outcomes,
        }),
      );
      for (const verdict of result.verdicts) {
        if (verdict.grant_consumed && verdict.grant) spent.set(verdict.grant.token, verdict.grant);
      }
      return result.verdicts;
    },
    awaitApproval(approvalId, options) {
      if (options.waitMs <= 0) {
        return client.getApproval(approvalId, {
          waitSeconds: 0,
          ...(options.signal ? { signal: options.signal } : {}),
        });
      }
      return client.waitForApproval(approvalId, {
        timeoutMs: options.waitMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    },
    async withdrawApproval(approvalId, reason) {
      try {
        await client.withdrawApproval(approvalId, reason !== undefined ? { reason } : {});
      } catch (error) {
        if (!(isCallgateError(error) && error.kind === 'conflict')) throw error;
      }
    },
    async findApproval(runId, callId) {
      const approvals = await client.listApprovals({ run_id: runId });
      return approvals.findLast((approval) => approval.call_id === callId);
    },
    async consumeGrant(token, binding) {
      const grant = spent.get(token);
      if (grant === undefined) {
        await client.consumeGrant({ token, ...binding });
        return undefined;
      }
      spent.delete(token);
      const mismatched = BINDING_FIELDS.filter((field) => grant[field] !== binding[field]);
      if (mismatched.length > 0)
        throw new CallgateError(
          'grant-invalid',
          `the grant was issued for another ${mismatched.map((field) => field.replace('_', ' ')).join(', ')}; it is now spent`,
          { call_id: binding.call_id },
        );
      return undefined;
    },
    async recordOutcome(runId, report) {
      const reports = held.get(runId);
      if (reports) reports.push(report);
      else held.set(runId, [report]);
      return report.outcome;
    },
    recordMessage: (runId, message) => client.recordMessage(runId, message),
    async endRun(runId, status) {
      await carrying(runId, (outcomes) => client.endRun(runId, status, { outcomes }));
      for (const [token, grant] of spent) if (grant.run_id === runId) spent.delete(token);
    },
    async flush() {
      for (const runId of [...held.keys()]) {
        await carrying(runId, async (outcomes) => {
          if (outcomes.length > 0) await client.recordOutcomes(runId, outcomes);
        });
      }
    },
  };
}
