// The Governor of a callgate server: what the TypeScript adapters talk to in remote mode. It has
// the shape of `Governor` from @callgate/core (adapters take either), over the HTTP API.
import { type Approval, isCallgateError, type Outcome, type ToolSpec } from '@callgate/protocol';
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
  /** `POST /v1/runs/:id/decisions`: one verdict per call, in order. */
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
  /** `POST /v1/grants/consume`. Resolves with nothing; throws `grant-invalid` on any mismatch, reuse or expiry. */
  consumeGrant(token: string, binding: GrantBinding): Promise<undefined>;
  /** `POST /v1/runs/:id/outcomes`: the outcome recorded. */
  recordOutcome(runId: string, report: OutcomeRequest): Promise<Outcome>;
  /** `POST /v1/runs/:id/messages`. */
  recordMessage(runId: string, message: MessageRequest): Promise<void>;
  /** `POST /v1/runs/:id/end`. */
  endRun(runId: string, status?: 'completed' | 'failed' | 'cancelled'): Promise<void>;
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
  | 'recordMessage'
  | 'endRun'
>;

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
  return {
    async startRun(start) {
      const run = await client.startRun(start);
      return { run_id: run.run_id };
    },
    async decide(runId, calls, options = {}) {
      const result = await client.decide(runId, calls, {
        ...(options.message ? { message: options.message } : {}),
        ...(options.tools ? { tools: options.tools } : {}),
      });
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
      await client.consumeGrant({ token, ...binding });
      return undefined;
    },
    recordOutcome: (runId, report) => client.recordOutcome(runId, report),
    recordMessage: (runId, message) => client.recordMessage(runId, message),
    async endRun(runId, status) {
      await client.endRun(runId, status);
    },
  };
}
