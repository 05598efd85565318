import { commit, commitCanonical } from '../json/canonical.js';
import type { JsonLimits } from '../json/safe-json.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Policy } from '../policy/index.js';
import type { Store } from '../store/store.js';
import type { Guardrails } from './guardrails.js';
import type { Logger } from './logger.js';
import type { ToolRegistry } from './registry.js';

/** What every step of the gate shares: the engine's parts. Internal to core. */
export interface GateContext {
  store: Store;
  /** The ledger, guarded: a run one of whose records could not be written is in `unrecordable`. */
  ledger: Pick<Ledger, 'append'>;
  /**
   * Runs whose record could not be written, with why: the engine refuses their later decisions
   * (`gate-unavailable`), failing closed rather than running calls whose record is lost.
   */
  unrecordable: Map<string, string>;
  registry: ToolRegistry;
  guardrails: Guardrails;
  jsonLimits: JsonLimits;
  clock: () => number;
  logger: Logger;
  vault: boolean;
  policy: () => Policy;
}

/**
 * A salted commitment to `value` (pass `canonical` when its RFC 8785 text is at hand). With the
 * vault on, the opening is written too and that write is pushed onto `writes` for the caller to
 * await. Returns the `sha256:` commitment a ledger record holds in place of the value.
 */
export function commitValue(
  context: GateContext,
  value: unknown,
  writes: Promise<unknown>[],
  canonical?: string,
): string {
  const { commitment, salt } = canonical === undefined ? commit(value) : commitCanonical(canonical);
  if (context.vault) writes.push(context.store.putOpenings([{ commitment, salt, value }]));
  return commitment;
}

/**
 * `ledger`'s append, noting in `unrecordable` (run id → why) every run one of whose records could
 * not be written: the engine fails such a run closed (docs/ledger.md, invariant 1).
 */
export function guardedLedger(ledger: Ledger, unrecordable: Map<string, string>): Pick<Ledger, 'append'> {
  return {
    append: (runId, body) =>
      ledger.append(runId, body).catch((error: unknown) => {
        unrecordable.set(runId, error instanceof Error ? error.message : String(error));
        throw error;
      }),
  };
}
