import type { Approval, ApprovalResponse } from '@callgate/protocol';

/**
 * Where an approval is routed so a person (or a program) can answer it. The engine calls
 * `request` once per new approval. A port either answers by resolving with an
 * {@link ApprovalResponse}, or resolves with `undefined` and lets the answer arrive another way
 * (e.g. an HTTP inbox calling `Engine.respondToApproval`). `signal` aborts when the approval is
 * resolved elsewhere, expires or is withdrawn; a port should then stop asking.
 */
export interface ApprovalPort {
  readonly name: string;
  request(
    approval: Approval,
    context: { signal: AbortSignal },
  ): Promise<ApprovalResponse | undefined> | undefined;
}

/**
 * An in-process port that asks a callback. The callback's answer resolves the approval; a
 * callback that throws leaves the approval pending (it then expires at its wait limit).
 */
export class CallbackApprovalPort implements ApprovalPort {
  readonly name: string;
  readonly #callback: (
    approval: Approval,
    signal: AbortSignal,
  ) => Promise<ApprovalResponse> | ApprovalResponse;

  constructor(
    callback: (approval: Approval, signal: AbortSignal) => Promise<ApprovalResponse> | ApprovalResponse,
    name = 'callback',
  ) {
    this.#callback = callback;
    this.name = name;
  }

  async request(approval: Approval, context: { signal: AbortSignal }): Promise<ApprovalResponse | undefined> {
    return await this.#callback(approval, context.signal);
  }
}

interface QueueEntry {
  approval: Approval;
  resolve: (response: ApprovalResponse | undefined) => void;
}

/**
 * An in-memory queue of approvals waiting for an answer: `pending()` lists them, `respond()`
 * answers one. Entries leave the queue when answered or when the engine aborts them.
 */
export class QueueApprovalPort implements ApprovalPort {
  readonly name: string;
  readonly #entries = new Map<string, QueueEntry>();
  readonly #listeners = new Set<(approval: Approval) => void>();

  constructor(name = 'queue') {
    this.name = name;
  }

  request(approval: Approval, context: { signal: AbortSignal }): Promise<ApprovalResponse | undefined> {
    return new Promise((resolve) => {
      const entry: QueueEntry = { approval, resolve };
      this.#entries.set(approval.id, entry);
      context.signal.addEventListener(
        'abort',
        () => {
          if (this.#entries.get(approval.id) === entry) this.#entries.delete(approval.id);
          resolve(undefined);
        },
        { once: true },
      );
      for (const listener of this.#listeners) listener(approval);
    });
  }

  /** Approvals waiting in this queue, oldest first. */
  pending(): Approval[] {
    return [...this.#entries.values()].map((entry) => entry.approval);
  }

  /** Calls `listener` for every approval that enters the queue; returns an unsubscribe function. */
  onRequest(listener: (approval: Approval) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Answers a queued approval. Returns false when it is not (or no longer) in the queue. */
  respond(approvalId: string, response: ApprovalResponse): boolean {
    const entry = this.#entries.get(approvalId);
    if (!entry) return false;
    this.#entries.delete(approvalId);
    entry.resolve(response);
    return true;
  }
}
