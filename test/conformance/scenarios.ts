// The one table of adapter scenarios is scenarios.json; this file gives it types. Every
// TypeScript adapter runs each row with its framework's own scripted model
// (packages/<adapter>/src/conformance.test.ts) and asserts the real outcome: whether each tool
// ran, what the model read as each call's result, and the ledger's records.
// docs/adapters-conformance.md is generated from those test results (report.mjs).
import type { ErrorKind, Outcome } from '@callgate/protocol';
import table from './scenarios.json' with { type: 'json' };

/** The reviewer an `in-app` answer is recorded as (the person the app signed in). */
export const IN_APP_REVIEWER = 'in-app@conformance';

/** The adapters the table runs against. */
export const ADAPTERS = ['ai-sdk', 'openai-agents', 'langchain'] as const satisfies readonly string[];
export type Adapter = (typeof ADAPTERS)[number];

/** One tool call as the scripted model makes it. */
export interface ScriptedCall {
  /** The model's call id; `null` when the model gives none, `''` when it gives an empty one. */
  id: string | null;
  tool: string;
  /** The arguments exactly as the model writes them: JSON text (possibly invalid). */
  arguments: string;
  /**
   * Frameworks whose tool calls carry parsed arguments (LangChain) get this JSON text itself
   * instead of the object it parses to. (Text that does not parse is always given as text.)
   */
  asText?: boolean;
}

/** One turn of the scripted model: tool calls (all in one message), or a final answer. */
export type Turn = { calls: ScriptedCall[] } | { text: string };

/** What the model read as a call's result. */
export type ModelSaw =
  | 'result'
  /** the framework's own error for a call it could not read (callgate's kind is in the ledger) */
  | 'framework-error'
  | ErrorKind;

/** The expected fate of one scripted call (in script order: turns, then calls in a turn). */
export interface ExpectedCall {
  tool: string;
  /** The tool's implementation ran. */
  ran: boolean;
  modelSaw: ModelSaw;
  /** The `call-decision` record: its effect, and its `error_kind` when the call was refused before the policy. */
  decision: 'allow' | 'deny' | 'ask';
  errorKind?: ErrorKind;
  /** The `approval-response` status, for asks. */
  approval?: 'approved' | 'denied' | 'expired' | 'withdrawn';
  /** The `call-end` outcome. */
  outcome: Outcome;
  /** The call id was minted by callgate (default false). */
  minted?: boolean;
  /** The attempt recorded (default 1). */
  attempt?: number;
}

/** How a framework runs a row differently, or why it cannot run it. */
export interface FrameworkNote {
  /** The row cannot be expressed in this framework; the reason is shown in the matrix. */
  unsupported?: string;
  /**
   * For an unsupported row the framework refuses by itself: the text of the error it fails the
   * run with. The harness then runs the row and asserts that error, and that no tool ran.
   */
  refusedWith?: string;
  /** How many scripted calls ran before the framework refused (default 0). */
  ranBefore?: number;
  /** Expected calls that differ for this framework (by index), with the reason. */
  calls?: Record<number, Partial<ExpectedCall>>;
  note?: string;
}

export interface Scenario {
  id: string;
  title: string;
  /** The scripted model's turns; after the last, it answers `done`. */
  turns: Turn[];
  /**
   * How the reviewer answers asks: through callgate's approval port (`approve`, `deny`, or no
   * answer: `silent`), or `in-app`: a person approves in the framework's own approval flow (the
   * SDK's approval parts in a chat app, a LangGraph interrupt resumed with a Command), answered
   * in callgate as reviewer {@link IN_APP_REVIEWER}. Default: no asks expected.
   */
  reviewer?: 'approve' | 'deny' | 'silent' | 'in-app';
  /** The policy's approval wait limit (default 5s). */
  approvalWait?: string;
  /** Run the agent streaming. */
  streaming?: boolean;
  /** The script of the agent used as the `researcher` tool. */
  subagent?: Turn[];
  expect: ExpectedCall[];
  frameworks?: Partial<Record<Adapter, FrameworkNote>>;
}

/** The table: test/conformance/scenarios.json (data, also read by the Python suite). */
export const SCENARIOS: Scenario[] = (table as { scenarios: Scenario[] }).scenarios;

/** The expected calls of `scenario` for `adapter`, with the framework's differences applied. */
export function expectedCalls(scenario: Scenario, adapter: Adapter): ExpectedCall[] {
  const changes = scenario.frameworks?.[adapter]?.calls ?? {};
  return scenario.expect.map((call, index) => ({ ...call, ...changes[index] }));
}
