import type { Approval, Grant } from '@callgate/protocol';

/** An approval and, when it was approved, the grant it yielded (handed out until it expires). */
export interface ApprovalState {
  approval: Approval;
  grant?: Grant;
  /** The arguments to run: a reviewer's edit when the policy allows edits, else the original. */
  arguments?: Record<string, unknown>;
}

/**
 * The grants of approved approvals (and the reviewer's permitted edits), kept in memory to be
 * handed out to whoever waits on the approval, until the grant expires.
 */
export class ApprovalHandouts {
  readonly #grants = new Map<string, Grant>();
  readonly #edited = new Map<string, Record<string, unknown>>();

  /** Keeps `grant` (and edited `args`) of an approval for `forMs` ms. */
  keep(approvalId: string, grant: Grant, args: Record<string, unknown> | undefined, forMs: number): void {
    this.#grants.set(approvalId, grant);
    if (args) this.#edited.set(approvalId, args);
    const forget = setTimeout(() => {
      this.#grants.delete(approvalId);
      this.#edited.delete(approvalId);
    }, forMs);
    forget.unref?.();
  }

  /** True while the grant of `approvalId` is kept. */
  has(approvalId: string): boolean {
    return this.#grants.has(approvalId);
  }

  /** The state of `approval` with the grant and arguments kept for it. */
  state(approval: Approval): ApprovalState {
    const grant = this.#grants.get(approval.id);
    const edited = this.#edited.get(approval.id);
    return {
      approval,
      ...(grant ? { grant } : {}),
      ...(approval.status === 'approved'
        ? { arguments: edited ?? (approval.arguments as Record<string, unknown>) }
        : {}),
    };
  }
}
