import type { Approval, Outcome, StoredGrant, ToolCall, ToolSpec } from '@callgate/protocol';
import type { ApprovalState } from './approvals.js';
import type { CallVerdict, ModelMessage } from './decide.js';
import type { Engine, RunStart } from './engine.js';
import type { GrantBinding } from './grants.js';
import type { CallOutcomeReport } from './outcomes.js';

/**
 * What a framework adapter needs of callgate, whether the engine runs in the same process or
 * behind the server's HTTP API. Adapters talk only to a Governor: they translate, they never
 * decide. Every verdict of `decide` that is `allowed` carries a one-use grant.
 */
export interface Governor {
  /**
   * Starts a run. Without `principal`, a local engine uses the framework's name and a server the
   * API key's name (a server never lets an agent key act under another name).
   */
  startRun(
    start: Omit<RunStart, 'principal'> & { principal?: string | undefined },
  ): Promise<{ run_id: string }>;
  /**
   * Decides a step's calls before any runs. `tools` registers specs the engine does not know
   * yet (never replacing a known one).
   */
  decide(
    runId: string,
    calls: readonly ToolCall[],
    options?: { message?: ModelMessage; tools?: ToolSpec[] },
  ): Promise<CallVerdict[]>;
  /** Waits up to `waitMs` for an approval to be answered; returns its state then. */
  awaitApproval(
    approvalId: string,
    options: { waitMs: number; signal?: AbortSignal },
  ): Promise<ApprovalState>;
  withdrawApproval(approvalId: string, reason?: string): Promise<void>;
  /**
   * The newest approval asked for call `callId` of run `runId`, whatever its status, or
   * undefined when none was: how an adapter finds the approval a framework's own approval
   * request stands for from the call it names (e.g. in a later process).
   */
  findApproval(runId: string, callId: string): Promise<Approval | undefined>;
  /** @throws CallgateError `grant-invalid` on any mismatch, reuse or expiry. */
  consumeGrant(token: string, binding: GrantBinding): Promise<StoredGrant | undefined>;
  recordOutcome(runId: string, report: CallOutcomeReport): Promise<Outcome>;
  recordMessage(runId: string, message: ModelMessage): Promise<void>;
  endRun(runId: string, status?: 'completed' | 'failed' | 'cancelled'): Promise<void>;
}

/** A {@link Governor} over an engine in this process. */
export function localGovernor(engine: Engine): Governor {
  return {
    startRun: ({ principal, ...start }) =>
      engine.startRun({ ...start, principal: principal ?? start.framework }),
    async decide(runId, calls, options = {}) {
      for (const spec of options.tools ?? []) {
        if (!engine.registry.has(spec.name)) engine.registry.add(spec);
      }
      return engine.decide(runId, calls, {
        issueGrants: true,
        ...(options.message ? { message: options.message } : {}),
      });
    },
    awaitApproval: (approvalId, options) => engine.approval(approvalId, options),
    async withdrawApproval(approvalId, reason) {
      await engine.withdrawApproval(approvalId, reason);
    },
    async findApproval(runId, callId) {
      const approvals = await engine.listApprovals({ run_id: runId });
      return approvals.findLast((approval) => approval.call_id === callId);
    },
    consumeGrant: (token, binding) => engine.consumeGrant(token, binding),
    recordOutcome: (runId, report) => engine.recordOutcome(runId, report),
    recordMessage: (runId, message) => engine.recordMessage(runId, message),
    async endRun(runId, status) {
      await engine.endRun(runId, status);
    },
  };
}
