import type { ApiKeyRow, ApprovalState } from '@callgate/core';
import { type Approval, approvalSchema, CallgateError } from '@callgate/protocol';
import { z } from 'zod';
import {
  approvalAnswerSchema,
  approvalStateSchema,
  approveBody,
  denyBody,
  getApprovalQuery,
  listApprovalsQuery,
  withdrawBody,
} from '../http/schemas.js';
import type { ServerContext } from '../server-context.js';
import { defineRoute, type Route } from './define.js';

/**
 * The approval `approvalId` as `key` may see it; an agent key sees only approvals of runs it owns.
 * @throws CallgateError `not-found` when there is none or the key may not see it.
 */
async function approvalFor(server: ServerContext, key: ApiKeyRow, approvalId: string): Promise<Approval> {
  const approval = await server.engine.store.getApproval(approvalId);
  if (approval && key.role !== 'agent') return approval;
  if (approval) {
    const run = await server.engine.store.getRun(approval.run_id);
    if (run && (await server.owns(key, run))) return approval;
  }
  throw new CallgateError('not-found', `no approval ${approvalId}`);
}

/** Routes of approvals: list, get (long-poll), approve and deny. */
export function approvalRoutes(server: ServerContext): Route[] {
  const { engine } = server;

  /**
   * Answers an approval as `key`. The answer says what it amounted to: `effective` is the status
   * the approval ended with, and when an approval with edited arguments counted as a denial
   * (policy `approval.allow_edits: false`), `message` says so. The request was processed either
   * way, hence 200.
   */
  async function answer(
    key: ApiKeyRow,
    approvalId: string,
    approved: boolean,
    body: { reason?: string; arguments?: Record<string, unknown> },
  ): Promise<z.output<typeof approvalAnswerSchema>> {
    const state: ApprovalState = await engine.respondToApproval(approvalId, {
      approved,
      reviewer: key.name,
      ...(body.reason !== undefined ? { reason: body.reason } : {}),
      ...(body.arguments !== undefined ? { arguments: body.arguments } : {}),
    });
    const effective = state.approval.status === 'approved' ? 'approved' : 'denied';
    server.logger.info(
      { approval_id: approvalId, status: state.approval.status, reviewer: key.name },
      'approval answered',
    );
    const editDenied = approved && effective === 'denied' && state.approval.edited === true;
    return {
      approval: state.approval,
      effective,
      ...(editDenied
        ? {
            message:
              'the approval was recorded as denied: you edited the arguments, and this policy (approval.allow_edits: false) counts an edit as a denial; approve without arguments to let the call run as asked',
          }
        : {}),
    };
  }

  return [
    defineRoute({
      method: 'get',
      path: '/approvals',
      operationId: 'listApprovals',
      summary: 'List approvals',
      roles: ['agent', 'reviewer', 'admin'],
      query: listApprovalsQuery,
      response: z.object({ approvals: z.array(approvalSchema) }),
      errors: [404],
      async handler({ query, key }) {
        if (key.role === 'agent') {
          // An agent lists the approvals of one run it owns; the inbox is for reviewers.
          if (!query.run_id) {
            throw new CallgateError(
              'request-invalid',
              'query.run_id: an agent key lists the approvals of one of its runs',
              {
                path: 'query.run_id',
              },
            );
          }
          await server.runFor(key, query.run_id);
        }
        const approvals = await engine.listApprovals({
          ...(query.status ? { status: query.status } : {}),
          ...(query.run_id ? { run_id: query.run_id } : {}),
          ...(query.limit ? { limit: query.limit } : {}),
        });
        return { approvals };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/approvals/:id',
      operationId: 'getApproval',
      summary: 'Read an approval, waiting for its answer',
      roles: ['agent', 'reviewer', 'admin'],
      query: getApprovalQuery,
      response: approvalStateSchema,
      errors: [404],
      async handler({ params, key, query, signal }) {
        const approval = await approvalFor(server, key, params.id ?? '');
        const waitMs = Math.round((query.wait ?? 0) * 1000);
        const state = await engine.approval(approval.id, { waitMs, signal });
        const run = await engine.store.getRun(approval.run_id);
        const grant = state.grant && run && (await server.mayHoldGrant(key, run)) ? state.grant : undefined;
        return {
          approval: state.approval,
          ...(grant ? { grant } : {}),
          ...(state.arguments ? { arguments: state.arguments } : {}),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/approvals/:id/approve',
      operationId: 'approve',
      summary: 'Approve a pending approval',
      roles: ['reviewer', 'admin'],
      body: approveBody,
      response: approvalAnswerSchema,
      errors: [404, 409],
      handler: ({ params, key, body }) => answer(key, params.id ?? '', true, body),
    }),
    defineRoute({
      method: 'post',
      path: '/approvals/:id/deny',
      operationId: 'deny',
      summary: 'Deny a pending approval',
      roles: ['reviewer', 'admin'],
      body: denyBody,
      response: approvalAnswerSchema,
      errors: [404, 409],
      handler: ({ params, key, body }) => answer(key, params.id ?? '', false, body),
    }),
    defineRoute({
      method: 'post',
      path: '/approvals/:id/withdraw',
      operationId: 'withdrawApproval',
      summary: 'Withdraw a pending approval (the agent stopped waiting)',
      roles: ['agent', 'admin'],
      body: withdrawBody,
      response: z.object({ approval: approvalSchema }),
      errors: [404, 409],
      async handler({ params, key, body }) {
        const approval = await approvalFor(server, key, params.id ?? '');
        const state = await engine.withdrawApproval(approval.id, body.reason ?? `withdrawn by ${key.name}`);
        if (!state) throw new CallgateError('conflict', `approval ${approval.id} is no longer pending`);
        return { approval: state.approval };
      },
    }),
  ];
}
