// What the offline verifier reports: every failure names its check and, when it is about one
// record, that record's seq, run and type.

/** The checks of {@link verifyBundle}, as named in failures. */
export const VERIFY_CHECKS = [
  'bundle-shape',
  'public-key',
  'checkpoint-signature',
  'checkpoint-origin',
  'checkpoint-order',
  'checkpoint-missing',
  'consistency',
  'truncation',
  'record-shape',
  'canonical',
  'record-order',
  'run-sequence',
  'chain',
  'inclusion',
  'approval',
  'execution',
  'policy-digest',
  'policy-missing',
  'opening',
  'run-end',
  'call-end',
  'grant',
  'witness',
  'manifest',
  'arguments-digest',
  'effective-arguments',
] as const;
/** One check of {@link VERIFY_CHECKS}. */
export type VerifyCheck = (typeof VERIFY_CHECKS)[number];

/** One failed check. `seq`, `run_id` and `type` name the record it is about, if any. */
export interface VerifyFailure {
  check: VerifyCheck;
  message: string;
  seq?: number;
  run_id?: string;
  type?: string;
}

/**
 * The verdict on a bundle: `ok` when nothing failed. `warnings` do not fail it (e.g. no pinned
 * key). `records` and `checkpoints` count what the bundle holds.
 */
export interface VerifyReport {
  ok: boolean;
  failures: VerifyFailure[];
  warnings: string[];
  records: number;
  checkpoints: number;
  /**
   * Bundle fields that carry meaning but are covered by no signature (`exported_at`,
   * `synchronous` of a `callgate-bundle/1` or `/2`): the exporter's claims, to be read as such.
   * Empty for a `callgate-bundle/3`, whose manifest signs them.
   */
  unsigned?: string[];
}

/** Options of {@link verifyBundle}. */
export interface VerifyOptions {
  /**
   * The log's verifier key (`<name>+<hex key id>+<base64 key>`) the verifier trusts. Without it the
   * bundle's own `public_key` is used, with a warning: a bundle can vouch for itself.
   */
  publicKey?: string;
  /** Also require every run to end with a `run-end` record. */
  strict?: boolean;
  /** The log size the verifier knows the log reached: a checkpoint at least this large must be present. */
  expectSize?: number;
  /**
   * Checkpoint notes the verifier already trusts (from a witness or an earlier export), signed by
   * the pinned key: the bundle must reach at least their size and agree on any root of equal size.
   */
  knownCheckpoints?: string[];
  /** Witness vkeys (c2sp.org/tlog-cosignature, Ed25519): the newest checkpoint must be cosigned by `quorum` of them. */
  witnesses?: string[];
  /** How many of `witnesses` must have cosigned. Default: all of them. */
  quorum?: number;
}

/** The part of a record a failure names, read defensively from unchecked input. */
export function recordLabel(record: unknown): Pick<VerifyFailure, 'seq' | 'run_id' | 'type'> {
  if (typeof record !== 'object' || record === null) return {};
  const { seq, run_id, type } = record as Record<string, unknown>;
  return {
    ...(typeof seq === 'number' ? { seq } : {}),
    ...(typeof run_id === 'string' ? { run_id } : {}),
    ...(typeof type === 'string' ? { type } : {}),
  };
}

/** Collects failures and warnings while the checks run. */
export class Findings {
  readonly failures: VerifyFailure[] = [];
  readonly warnings: string[] = [];

  /** Records a failure of `check`, about `record` when given. */
  fail(check: VerifyCheck, message: string, record?: unknown): void {
    this.failures.push({ check, message, ...(record === undefined ? {} : recordLabel(record)) });
  }

  warn(message: string): void {
    this.warnings.push(message);
  }

  /** Adds what `other` collected (a check run apart, reported at this point), in its order. */
  append(other: Findings): void {
    for (const failure of other.failures) this.failures.push(failure);
    for (const warning of other.warnings) this.warnings.push(warning);
  }
}
