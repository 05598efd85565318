import type { ToolSpec } from '@callgate/protocol';
import type { ApprovalPort } from '../approvals/port.js';
import type { JsonLimits } from '../json/safe-json.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Policy } from '../policy/index.js';
import type { Store } from '../store/store.js';
import type { ApprovalChannel } from './approval-channel.js';
import type { ModelMessage } from './decide.js';
import type { GuardrailOptions } from './guardrails.js';
import type { Logger } from './logger.js';
import type { CallOutcomeReport } from './outcomes.js';

/** Options of {@link Engine}. */
export interface EngineOptions {
  store: Store;
  /** The ledger records are written to (open it on the same store). */
  ledger: Ledger;
  policy: Policy;
  /** The tools calls may name; more can be added with `engine.registry.add`. */
  tools?: Iterable<ToolSpec>;
  /** Where approvals are routed, besides the engine's own API. */
  approvalPorts?: ApprovalPort[];
  /**
   * How engines sharing the store (server replicas) hear of each other's approvals: an answer
   * received by one wakes the waiter on another. Default: none (approvals live in this process).
   */
  approvalChannel?: ApprovalChannel;
  /** Keep content (arguments, results, messages) beside the records as openings. Default false. */
  vault?: boolean;
  /** Size and depth limits on arguments. Default 1 MiB, depth 64. */
  jsonLimits?: Partial<JsonLimits>;
  guardrails?: GuardrailOptions;
  /**
   * Idle limit of a run, in ms: a run this engine has seen that nothing came for (no decision,
   * outcome, message) for this long is ended `abandoned`, its pending approvals withdrawn first.
   * Default: no limit.
   */
  idleRunMs?: number;
  /** Epoch ms. Default `Date.now`. */
  clock?: () => number;
  logger?: Logger;
}

/** What starts a run. */
export interface RunStart {
  principal: string;
  framework: string;
  labels?: Record<string, string>;
  parent_run_id?: string;
}

/** Options of {@link Engine.decide}. */
export interface DecideOptions {
  /** The model message that asked for these calls; recorded (committed) before the decisions. */
  message?: ModelMessage;
  /** Issue a one-use grant for each allowed call (for callers that run the tool elsewhere). */
  issueGrants?: boolean;
  /**
   * Consume the grant of each allowed call with its decision (for callers that run the tool
   * themselves, right after): `true` for every call, or one flag per call, in order. Implies
   * `issueGrants` for those calls; their verdicts say `grant_consumed: true`.
   */
  consumeGrants?: boolean | readonly boolean[];
  /**
   * Outcomes of the run's earlier calls not recorded yet (the previous step's), recorded in
   * order before the decisions and committed together with them: see `Engine.decideStep`.
   */
  outcomes?: readonly CallOutcomeReport[];
}
