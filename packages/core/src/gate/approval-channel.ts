// How engines sharing one store (server replicas) tell each other about approvals: one engine
// creates an approval, another may receive the reviewer's answer, a third may hold the agent's
// long-poll. Without a channel (one engine per store) all of that stays in process.
import type { Approval, Grant } from '@callgate/protocol';

/**
 * An approval created or resolved by some engine: for an approved one, the grant it yielded and
 * the arguments to run (a reviewer's edit, when the policy allows edits).
 */
export interface ApprovalEvent {
  approval: Approval;
  grant?: Grant;
  arguments?: Record<string, unknown>;
}

/** What an engine hands out for an answered approval: its grant and the arguments to run. */
export type ApprovalHandout = Omit<ApprovalEvent, 'approval'>;

/**
 * The channel between engines sharing one store (e.g. PostgreSQL `LISTEN/NOTIFY`). An
 * implementation delivers every event published by any engine to the subscribers of every other
 * engine, promptly (an agent waits on it), and keeps the hand-out of an approved approval until
 * its grant expires, for waiters that arrive after the event.
 */
export interface ApprovalChannel {
  /**
   * Publishes an event to the other engines; for an approved approval with a grant, keeps its
   * hand-out first. Resolves once the other engines can see it.
   */
  publish(event: ApprovalEvent): Promise<void>;
  /** Receives events published by other engines; returns an unsubscribe function. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
  /** The hand-out kept for an approval, if any and its grant has not expired. */
  handout(approvalId: string): Promise<ApprovalHandout | undefined>;
}

/** Waiters for approvals resolved elsewhere, per approval id. */
export class RemoteWaiters {
  readonly #waiters = new Map<string, Set<(event: ApprovalEvent) => void>>();

  /** Calls `waiter` once when `approvalId` is resolved elsewhere; returns a cancel function. */
  add(approvalId: string, waiter: (event: ApprovalEvent) => void): () => void {
    let set = this.#waiters.get(approvalId);
    if (set === undefined) {
      set = new Set();
      this.#waiters.set(approvalId, set);
    }
    set.add(waiter);
    return () => {
      set.delete(waiter);
      if (set.size === 0 && this.#waiters.get(approvalId) === set) this.#waiters.delete(approvalId);
    };
  }

  /**
   * The next event of `approvalId`, or undefined after `ms` or when `signal` aborts. Registered
   * at once: read the store after calling this, and an event in between is not missed. Call
   * `cancel` when done.
   */
  next(
    approvalId: string,
    options: { ms: number; signal?: AbortSignal | undefined },
  ): { event: Promise<ApprovalEvent | undefined>; cancel: () => void } {
    let remove = () => {};
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort = () => {};
    const event = new Promise<ApprovalEvent | undefined>((resolve) => {
      remove = this.add(approvalId, resolve);
      timer = setTimeout(() => resolve(undefined), Math.max(0, options.ms));
      onAbort = () => resolve(undefined);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    const cancel = () => {
      remove();
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    return { event, cancel };
  }

  /** Wakes every waiter of the event's approval. */
  wake(event: ApprovalEvent): void {
    const set = this.#waiters.get(event.approval.id);
    if (set === undefined) return;
    this.#waiters.delete(event.approval.id);
    for (const waiter of set) waiter(event);
  }
}
