import type { Engine } from './engine.js';

/**
 * Who answers callgate approvals for a person an app has signed in (a chat app's Approve
 * button, a LangGraph resume): the answer is recorded under the reviewer's name. A
 * `CallgateClient` with a reviewer key is one (the server records the key's name); so is
 * {@link localReviewer} for an engine in this process.
 */
export interface ApprovalAnswerer {
  /** Approves, optionally with edited `arguments` (a denial unless the policy allows edits). */
  approve(
    approvalId: string,
    options?: { reason?: string; arguments?: Record<string, unknown> },
  ): Promise<unknown>;
  deny(approvalId: string, options?: { reason?: string }): Promise<unknown>;
}

/**
 * The {@link ApprovalAnswerer} of `engine` acting as reviewer `reviewer` (the name the
 * `approval-response` record carries).
 * @throws CallgateError `conflict` from either method when the approval was answered already.
 */
export function localReviewer(engine: Engine, reviewer: string): ApprovalAnswerer {
  return {
    approve: (approvalId, options = {}) =>
      engine.respondToApproval(approvalId, {
        approved: true,
        reviewer,
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
        ...(options.arguments !== undefined ? { arguments: options.arguments } : {}),
      }),
    deny: (approvalId, options = {}) =>
      engine.respondToApproval(approvalId, {
        approved: false,
        reviewer,
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
      }),
  };
}
