import {
  type Approval,
  type ApprovalResponse,
  CallgateError,
  type Decision,
  type Grant,
} from '@callgate/protocol';
import type { ApprovalPort } from '../approvals/port.js';
import { argumentsDigestOf } from '../ledger/arguments-key.js';
import { answerSettlement, parseApprovalAnswer, type Settlement } from './approval-answers.js';
import { type ApprovalChannel, type ApprovalEvent, RemoteWaiters } from './approval-channel.js';
import { ApprovalHandouts, type ApprovalState } from './approval-handouts.js';
import type { GateContext } from './context.js';
import type { CallVerdict } from './decide.js';
import { issueGrant } from './grants.js';
import { approvalId } from './ids.js';

/** How long a waiter waits for the hand-out of an approval another engine answered, in ms. */
const HANDOUT_WAIT_MS = 5000;

export type { ApprovalState } from './approval-handouts.js';

interface Live {
  controller: AbortController;
  timer: ReturnType<typeof setTimeout>;
  waiters: Set<(state: ApprovalState) => void>;
  arguments: Record<string, unknown>;
}

/**
 * Creates approvals, routes them to the approval ports, resolves them exactly once (answer,
 * expiry at the wait limit, or withdrawal) and issues the grant of an approved call.
 */
export class ApprovalCoordinator {
  readonly #context: GateContext;
  readonly #ports: ApprovalPort[];
  readonly #live = new Map<string, Live>();
  readonly #handouts = new ApprovalHandouts();
  readonly #listeners = new Set<(approval: Approval) => void>();
  /** Resolutions under way: an approval's stored status changes before its grant exists. */
  readonly #resolving = new Map<string, Promise<ApprovalState | undefined>>();
  /** Engines sharing the store (replicas) hear of each other's approvals through it. */
  readonly #channel: ApprovalChannel | undefined;
  readonly #remoteWaiters = new RemoteWaiters();
  readonly #unsubscribe: () => void;

  constructor(context: GateContext, ports: ApprovalPort[], channel?: ApprovalChannel) {
    this.#context = context;
    this.#ports = ports;
    this.#channel = channel;
    this.#unsubscribe = channel?.subscribe((event) => this.#heard(event)) ?? (() => {});
  }

  /** Publishes to the other engines; a failure is logged (the store already holds the truth). */
  async #publish(event: ApprovalEvent): Promise<void> {
    if (this.#channel === undefined) return;
    try {
      await this.#channel.publish(event);
    } catch (error) {
      this.#context.logger.error(
        { approval_id: event.approval.id, error: String(error) },
        'could not tell the other replicas about an approval',
      );
    }
  }

  /** An approval another engine created or resolved: wake this engine's waiters and listeners. */
  #heard(event: ApprovalEvent): void {
    const { approval } = event;
    if (approval.status !== 'pending') {
      this.#keepHandout(approval.id, event);
      const live = this.#live.get(approval.id);
      if (live) {
        this.#live.delete(approval.id);
        clearTimeout(live.timer);
        live.controller.abort();
        const state = this.#state(approval);
        for (const waiter of live.waiters) waiter(state);
      }
      this.#remoteWaiters.wake(event);
    }
    this.#emit(approval);
  }

  /** Remembers an approved approval's grant and arguments until the grant expires. */
  #keepHandout(approvalId: string, handout: Omit<ApprovalEvent, 'approval'>): void {
    if (handout.grant === undefined) return;
    this.#handouts.keep(
      approvalId,
      handout.grant,
      handout.arguments,
      Math.max(0, handout.grant.expires_at - this.#context.clock()),
    );
  }

  /** Calls `listener` with every approval created or resolved; returns an unsubscribe function. */
  subscribe(listener: (approval: Approval) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(approval: Approval): void {
    for (const listener of this.#listeners) {
      try {
        listener(approval);
      } catch (error) {
        this.#context.logger.warn({ error: String(error) }, 'approval listener failed');
      }
    }
  }

  /** Creates the approval of an `ask` verdict, records it and routes it to every port. */
  async create(runId: string, verdict: CallVerdict, decision: Decision): Promise<Approval> {
    const { store, ledger, clock } = this.#context;
    const policy = this.#context.policy();
    const now = clock();
    const approval: Approval = {
      id: approvalId(now),
      run_id: runId,
      call_id: verdict.call_id,
      tool: verdict.tool,
      arguments: verdict.arguments ?? {},
      arguments_digest: verdict.arguments_digest ?? argumentsDigestOf(verdict.arguments ?? {}),
      ...(verdict.injected ? { injected: verdict.injected } : {}),
      rules: decision.rules,
      reason: decision.reason,
      status: 'pending',
      created_at: now,
      expires_at: now + policy.approval.waitMs,
    };
    await Promise.all([
      store.createApproval(approval),
      ledger.append(runId, {
        type: 'approval-request',
        approval_id: approval.id,
        call_id: approval.call_id,
        tool: approval.tool,
        arguments_digest: approval.arguments_digest,
        rules: approval.rules,
        reason: approval.reason,
        expires_at: approval.expires_at,
      }),
    ]);
    const controller = new AbortController();
    const timer = setTimeout(
      () => {
        this.expire(approval.id).catch((error) =>
          this.#context.logger.error({ error: String(error) }, 'expiry failed'),
        );
      },
      Math.max(0, approval.expires_at - now),
    );
    timer.unref?.();
    this.#live.set(approval.id, {
      controller,
      timer,
      waiters: new Set(),
      arguments: approval.arguments as Record<string, unknown>,
    });
    this.#emit(approval);
    for (const port of this.#ports) this.#dispatch(port, approval, controller.signal);
    await this.#publish({ approval });
    return approval;
  }

  #dispatch(port: ApprovalPort, approval: Approval, signal: AbortSignal): void {
    let answer: Promise<ApprovalResponse | undefined> | undefined;
    try {
      answer = port.request(structuredClone(approval), { signal }) ?? undefined;
    } catch (error) {
      this.#context.logger.warn({ port: port.name, error: String(error) }, 'approval port failed');
      return;
    }
    answer
      ?.then(async (response) => {
        if (response && !signal.aborted) await this.respond(approval.id, response);
      })
      .catch((error) => {
        if (!(error instanceof CallgateError && error.kind === 'conflict')) {
          this.#context.logger.warn({ port: port.name, error: String(error) }, 'approval port failed');
        }
      });
  }

  /**
   * Answers a pending approval. An edit of the arguments (`response.arguments` differing from
   * the call's) is recorded as an edit and counts as a denial unless the policy allows edits.
   *
   * @throws CallgateError `request-invalid` for a malformed response, `not-found` for an unknown
   *   approval, `conflict` when it is no longer pending.
   */
  async respond(approvalId: string, response: ApprovalResponse): Promise<ApprovalState> {
    const answer = parseApprovalAnswer(response, this.#context.jsonLimits);
    const current = await this.#context.store.getApproval(approvalId);
    if (!current) throw new CallgateError('not-found', `no approval ${approvalId}`);
    const state = await this.#resolve(
      current,
      answerSettlement(answer, current, this.#context.policy().approval.allowEdits),
    );
    if (!state) throw new CallgateError('conflict', `approval ${approvalId} is no longer pending`);
    return state;
  }

  /** Expires a pending approval whose wait limit has passed (no-op otherwise). */
  async expire(approvalId: string): Promise<ApprovalState | undefined> {
    const current = await this.#context.store.getApproval(approvalId);
    if (current?.status !== 'pending') return undefined;
    return this.#resolve(current, { status: 'expired', reason: 'no answer within the wait limit' });
  }

  /** Withdraws a pending approval (the caller stopped waiting, e.g. it was cancelled). */
  async withdraw(approvalId: string, reason = 'withdrawn by the caller'): Promise<ApprovalState | undefined> {
    const current = await this.#context.store.getApproval(approvalId);
    if (current?.status !== 'pending') return undefined;
    return this.#resolve(current, { status: 'withdrawn', reason });
  }

  #resolve(current: Approval, outcome: Settlement): Promise<ApprovalState | undefined> {
    if (this.#resolving.has(current.id)) return Promise.resolve(undefined);
    const settling = this.#settle(current, outcome).finally(() => this.#resolving.delete(current.id));
    this.#resolving.set(current.id, settling);
    return settling;
  }

  /** Resolves a pending approval in the store and the ledger; use through #resolve. */
  async #settle(current: Approval, outcome: Settlement): Promise<ApprovalState | undefined> {
    const { store, ledger, clock } = this.#context;
    const now = clock();
    const resolved = await store.resolveApproval(current.id, {
      status: outcome.status,
      resolved_at: now,
      ...(outcome.reviewer !== undefined ? { reviewer: outcome.reviewer } : {}),
      ...(outcome.reason !== undefined ? { response_reason: outcome.reason } : {}),
      ...(outcome.edited ? { edited: true } : {}),
    });
    if (!resolved) return undefined;
    const digest = outcome.digest ?? current.arguments_digest;
    const writes: Promise<unknown>[] = [
      ledger.append(current.run_id, {
        type: 'approval-response',
        approval_id: current.id,
        call_id: current.call_id,
        status: outcome.status,
        reviewer: outcome.reviewer ?? null,
        reason: outcome.reason ?? null,
        edited: outcome.edited ?? false,
        arguments_digest: digest,
      }),
    ];
    let grant: Grant | undefined;
    if (outcome.status === 'approved') {
      const ttl = this.#context.policy().approval.ttlMs;
      grant = await issueGrant(
        store,
        { run_id: current.run_id, call_id: current.call_id, tool: current.tool, arguments_digest: digest },
        ttl,
        now,
      );
      this.#handouts.keep(current.id, grant, outcome.arguments, ttl);
    }
    await Promise.all(writes);
    const live = this.#live.get(current.id);
    const state: ApprovalState = {
      approval: resolved,
      ...(grant ? { grant } : {}),
      ...(outcome.status === 'approved'
        ? {
            arguments: outcome.arguments ?? live?.arguments ?? (current.arguments as Record<string, unknown>),
          }
        : {}),
    };
    if (live) {
      this.#live.delete(current.id);
      clearTimeout(live.timer);
      live.controller.abort();
      for (const waiter of live.waiters) waiter(state);
    }
    this.#emit(resolved);
    await this.#publish({
      approval: resolved,
      ...(grant ? { grant } : {}),
      ...(grant && outcome.arguments ? { arguments: outcome.arguments } : {}),
    });
    return state;
  }

  /**
   * The approval's current state, waiting up to `waitMs` for it to leave `pending`. A pending
   * approval past its wait limit is expired first. `signal` ends the wait early (the approval
   * stays pending; call {@link withdraw} to withdraw it).
   *
   * @throws CallgateError `not-found` for an unknown approval.
   */
  async get(
    approvalId: string,
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<ApprovalState> {
    await this.#resolving.get(approvalId);
    let approval = await this.#context.store.getApproval(approvalId);
    if (approval && approval.status !== 'pending') await this.#resolving.get(approvalId);
    if (!approval) throw new CallgateError('not-found', `no approval ${approvalId}`);
    if (approval.status === 'pending' && approval.expires_at <= this.#context.clock()) {
      const expired = await this.expire(approvalId);
      approval = expired?.approval ?? (await this.#context.store.getApproval(approvalId)) ?? approval;
    }
    if (approval.status !== 'pending' || !options.waitMs || options.signal?.aborted)
      return this.#handedOut(approval);
    const live = this.#live.get(approvalId);
    if (!live) return this.#channel ? this.#waitElsewhere(approval, options) : this.#state(approval);
    const pending = approval;
    return new Promise<ApprovalState>((resolve) => {
      const done = (state: ApprovalState) => {
        clearTimeout(timer);
        live.waiters.delete(done);
        options.signal?.removeEventListener('abort', onAbort);
        resolve(state);
      };
      const onAbort = () => done(this.#state(pending));
      const timer = setTimeout(() => done(this.#state(pending)), options.waitMs);
      live.waiters.add(done);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The state of a resolved approval, with the hand-out another engine kept when this one has none. */
  async #handedOut(approval: Approval): Promise<ApprovalState> {
    const channel = this.#channel;
    if (channel === undefined || approval.status !== 'approved' || this.#handouts.has(approval.id))
      return this.#state(approval);
    // The answering engine stores the approval's status before its hand-out: while its grant may
    // still be live, wait for the hand-out (registered first, so that its event is not missed).
    const live = (approval.resolved_at ?? 0) + this.#context.policy().approval.ttlMs - this.#context.clock();
    const next = this.#remoteWaiters.next(approval.id, { ms: Math.min(live, HANDOUT_WAIT_MS) });
    try {
      const handout =
        (await channel.handout(approval.id)) ?? (await next.event) ?? (await channel.handout(approval.id));
      if (handout) this.#keepHandout(approval.id, handout);
    } finally {
      next.cancel();
    }
    return this.#state(approval);
  }

  /**
   * Waits for an approval created by another engine (its wait timer and ports live there): until
   * the channel says it was resolved, `waitMs` passes, or `signal` aborts. The waiter is
   * registered before the store is read again, so an answer in between is not missed.
   */
  async #waitElsewhere(
    pending: Approval,
    options: { waitMs?: number; signal?: AbortSignal },
  ): Promise<ApprovalState> {
    const next = this.#remoteWaiters.next(pending.id, { ms: options.waitMs ?? 0, signal: options.signal });
    try {
      const again = await this.#context.store.getApproval(pending.id);
      if (again && again.status !== 'pending') return await this.#handedOut(again);
      const approval = (await next.event)?.approval ?? pending;
      if (approval.status !== 'pending') return await this.#handedOut(approval);
      // Expired while nobody else was watching it (its creator may be gone).
      if (approval.expires_at <= this.#context.clock()) {
        const expired = await this.expire(approval.id);
        if (expired) return expired;
      }
      return await this.#handedOut((await this.#context.store.getApproval(approval.id)) ?? approval);
    } finally {
      next.cancel();
    }
  }

  #state(approval: Approval): ApprovalState {
    return this.#handouts.state(approval);
  }

  /** Stops every timer and aborts every port request (pending approvals stay pending in the store). */
  close(): void {
    this.#unsubscribe();
    for (const live of this.#live.values()) {
      clearTimeout(live.timer);
      live.controller.abort();
    }
    this.#live.clear();
  }
}
