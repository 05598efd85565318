// The generated conformance harness: whole runs as fast-check values, and the checks made after
// each run from outside (docs/ledger.md, "Invariants of the record"). Each integration
// (core.test.ts, http.test.ts, gateway.test.ts) drives the same generated runs through its own
// real path and hands the outcome to `checkRun`.
import { verifyBundle } from '@callgate/core/ledger';
import type { Bundle, LedgerRecord } from '@callgate/protocol';
import fc from 'fast-check';

/** How a call's id is given. */
export type IdForm = 'fresh' | 'missing' | 'empty' | 'duplicate' | 'reused';
/** Which tool a call names (`unknown` is not registered; `wipe` is denied by the policy). */
export type ToolChoice = 'read' | 'pay-small' | 'pay-large' | 'wipe' | 'unknown';
/** How the arguments are written. */
export type ArgumentForm =
  | 'object'
  | 'json-text'
  | 'invalid-text'
  | 'huge-integer'
  | 'lone-surrogate'
  | 'nan'
  | 'missing';
/** What the reviewer of an ask does: answers, edits, never answers, answers late, or twice. */
export type ReviewerAct = 'approve' | 'deny' | 'edit' | 'none' | 'late' | 'twice';
/** What the tool does when it runs. */
export type ToolAct = 'succeed' | 'throw' | 'hang' | 'non-canonical';

export interface GeneratedCall {
  id: IdForm;
  tool: ToolChoice;
  arguments: ArgumentForm;
  reviewer: ReviewerAct;
  act: ToolAct;
}

export interface GeneratedRun {
  steps: GeneratedCall[][];
}

export const TOOL_NAMES: Record<ToolChoice, string> = {
  read: 'read_note',
  'pay-small': 'pay',
  'pay-large': 'pay',
  wipe: 'wipe',
  unknown: 'format_disk',
};

/** The policy every integration runs the generated runs under. */
export const GENERATED_POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 5s, allow_edits: false }
rules:
  - id: reads
    match: { tools: [read_note] }
    effect: allow
  - id: small-payments
    match: { tools: [pay] }
    when: args.amount <= 1000
    effect: allow
  - id: large-payments
    match: { tools: [pay] }
    when: args.amount > 1000
    effect: ask
    reason: payments over 1000 need a person
  - id: no-wipes
    match: { tools: [wipe] }
    effect: deny
    reason: wiping is not allowed
`;

const objectOf = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The tools' specs (JSON Schema 2020-12 input schemas). */
export const GENERATED_TOOLS = [
  { name: 'read_note', inputSchema: objectOf({ key: { type: 'string' } }, ['key']) },
  {
    name: 'pay',
    inputSchema: objectOf({ to: { type: 'string' }, amount: { type: 'number' } }, ['to', 'amount']),
  },
  { name: 'wipe', inputSchema: objectOf({ path: { type: 'string' } }, ['path']) },
];

/** Arguments a call carries (an object, JSON text, or nothing) and whether the gate can accept them. */
export function argumentsOf(call: GeneratedCall, index: number): { value: unknown; valid: boolean } {
  const base: Record<string, unknown> =
    call.tool === 'read'
      ? { key: `note-${index}` }
      : call.tool === 'pay-small'
        ? { to: `acme-${index}`, amount: 10 + index }
        : call.tool === 'pay-large'
          ? { to: `acme-${index}`, amount: 5000 + index }
          : { path: `/data/${index}` };
  const firstKey = Object.keys(base)[0] as string;
  switch (call.arguments) {
    case 'object':
      return { value: base, valid: true };
    case 'json-text':
      return { value: JSON.stringify(base), valid: true };
    case 'invalid-text':
      return { value: JSON.stringify(base).slice(0, -3), valid: false };
    case 'huge-integer':
      return { value: `${JSON.stringify(base).slice(0, -1)},"n":9007199254740993}`, valid: false };
    case 'lone-surrogate':
      return { value: { ...base, [firstKey]: `x\uD800y` }, valid: false };
    case 'nan':
      return { value: { ...base, [firstKey]: Number.NaN }, valid: false };
    case 'missing':
      return { value: undefined, valid: false };
  }
}

/** The id a call carries, given the ids used so far in this step and earlier steps. */
export function idOf(call: GeneratedCall, step: number, index: number, thisStep: string[], before: string[]) {
  switch (call.id) {
    case 'fresh':
      return `s${step}c${index}`;
    case 'missing':
      return undefined;
    case 'empty':
      return '';
    case 'duplicate':
      return thisStep.at(-1) ?? `s${step}c${index}`;
    case 'reused':
      return before.at(-1) ?? `s${step}c${index}`;
  }
}

/** One generated call as a model writes it: its id (undefined: none), tool name, arguments as text. */
export interface ModelCall {
  id: string | undefined;
  tool: string;
  /** The arguments as the model's JSON text (`NaN` written as the bare token, big integers with their digits). */
  text: string;
  /** The arguments as an object, when the framework carries objects and they are representable. */
  object: Record<string, unknown> | undefined;
  /** Position of the call in the run (0-based), carried in its arguments (`note-3`, `acme-3`, `/data/3`). */
  index: number;
  call: GeneratedCall;
}

/**
 * The text a model sends as a call's arguments: `object` and `json-text` alike (a model writes
 * text), `NaN` as its bare token, a lone surrogate as its `\ud800` escape, nothing as `''`.
 */
export function argumentsText(call: GeneratedCall, index: number): string {
  const { value } = argumentsOf(call, index);
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (call.arguments === 'nan') return JSON.stringify(value).replace('null', 'NaN');
  return JSON.stringify(value);
}

/** The steps of a run as a model writes them, ids assigned as the generator says. */
export function modelSteps(run: GeneratedRun): ModelCall[][] {
  const before: string[] = [];
  let index = 0;
  return run.steps.map((generated, step) => {
    const thisStep: string[] = [];
    const calls = generated.map((call) => {
      const id = idOf(call, step, index, thisStep, before);
      if (id) thisStep.push(id);
      const { value } = argumentsOf(call, index);
      const object = call.arguments === 'object' ? (value as Record<string, unknown>) : undefined;
      const modelCall: ModelCall = {
        id,
        tool: TOOL_NAMES[call.tool],
        text: argumentsText(call, index),
        object,
        index,
        call,
      };
      index++;
      return modelCall;
    });
    before.push(...thisStep);
    return calls;
  });
}

/** The position a tool's arguments name (`note-3`, `acme-3`, `/data/3` → 3), or -1. */
export function indexOfArguments(args: unknown): number {
  const values = args && typeof args === 'object' ? Object.values(args as object) : [];
  for (const value of values) {
    const match = typeof value === 'string' ? /(?:note-|acme-|\/data\/)(\d+)$/.exec(value) : null;
    if (match) return Number(match[1]);
  }
  return -1;
}

/** What the tool returns for `act` (a value with no canonical JSON form for `non-canonical`). */
export function resultOf(act: ToolAct, index: number): unknown {
  if (act === 'non-canonical') {
    const values = [{ score: Number.NaN }, { text: 'bad \uDC00' }, { id: 12345678901234567890n }, [Infinity]];
    return values[index % values.length];
  }
  return { done: index };
}

/**
 * What a generated call is drawn from, each form as often as it is listed (the weights): shared
 * by every integration, the Haystack hook's hypothesis strategies included (check-service.ts).
 */
export const VOCABULARY = {
  id: ['fresh', 'fresh', 'fresh', 'missing', 'empty', 'duplicate', 'reused'] as IdForm[],
  tool: ['read', 'read', 'pay-small', 'pay-large', 'pay-large', 'wipe', 'unknown'] as ToolChoice[],
  arguments: [
    'object',
    'object',
    'object',
    'json-text',
    'json-text',
    'invalid-text',
    'huge-integer',
    'lone-surrogate',
    'nan',
    'missing',
  ] as ArgumentForm[],
  reviewer: ['approve', 'approve', 'deny', 'edit', 'none', 'late', 'twice'] as ReviewerAct[],
  act: ['succeed', 'succeed', 'throw', 'hang', 'non-canonical'] as ToolAct[],
};

const callArbitrary: fc.Arbitrary<GeneratedCall> = fc.record({
  id: fc.constantFrom(...VOCABULARY.id),
  tool: fc.constantFrom(...VOCABULARY.tool),
  arguments: fc.constantFrom(...VOCABULARY.arguments),
  reviewer: fc.constantFrom(...VOCABULARY.reviewer),
  act: fc.constantFrom(...VOCABULARY.act),
});

/** Whole runs: 1–`maxSteps` steps of 1–6 calls. */
export function runsOf(maxSteps: number): fc.Arbitrary<GeneratedRun> {
  return fc.record({
    steps: fc.array(fc.array(callArbitrary, { minLength: 1, maxLength: 6 }), {
      minLength: 1,
      maxLength: maxSteps,
    }),
  });
}

/** Whole runs: 1–4 steps of 1–6 calls. */
export const runArbitrary: fc.Arbitrary<GeneratedRun> = runsOf(4);

const call = (id: IdForm, tool: ToolChoice, args: ArgumentForm, act: ToolAct = 'succeed'): GeneratedCall => ({
  id,
  tool,
  arguments: args,
  reviewer: 'approve',
  act,
});

/**
 * Every counterexample the harness has shrunk, run first by every integration on every pass (as
 * fast-check `examples`), so a class once found stays closed; each is also a fixed row of
 * ../fidelity-scenarios.json, played over the wire against a real server:
 * - one call id twice in one step: the first attempt's outcome was lost (recorded against the
 *   latest attempt only), and LangChain's adapter ran one attempt twice;
 * - a result holding a lone surrogate: the HTTP API refused the whole outcome, so the call ended
 *   `decided-not-completed` although it ran;
 * - a call with no arguments: the HTTP API refused the whole step instead of deciding it;
 * - a call reusing an id an earlier step's result answers, beside a new call: LangChain's agent
 *   ran only the new one, so the reused call never ran and the model read no result for it.
 */
export const COUNTEREXAMPLES: GeneratedRun[] = [
  { steps: [[call('fresh', 'read', 'object'), call('duplicate', 'read', 'object')]] },
  { steps: [[call('fresh', 'read', 'object', 'non-canonical'), call('fresh', 'read', 'object')]] },
  { steps: [[call('fresh', 'read', 'missing'), call('fresh', 'read', 'object')]] },
  {
    steps: [
      [call('fresh', 'read', 'object')],
      [call('fresh', 'read', 'object'), call('reused', 'read', 'object')],
    ],
  },
];

/** The counterexamples as fast-check `examples` of a property over one run. */
export const EXAMPLES: [GeneratedRun][] = COUNTEREXAMPLES.map((run) => [run]);

/** How many runs a pass generates: CALLGATE_FUZZ_RUNS, else `quick`. */
export function runCount(quick: number): number {
  const configured = Number(process.env.CALLGATE_FUZZ_RUNS);
  return Number.isInteger(configured) && configured > 0 ? configured : quick;
}

/** The seed of a pass: CALLGATE_FUZZ_SEED, else a fixed one (the quick pass is reproducible). */
export function runSeed(): number {
  const configured = Number(process.env.CALLGATE_FUZZ_SEED);
  return Number.isInteger(configured) ? configured : 10_2026;
}

/** What an integration observed of one run, to be checked from outside. */
export interface Observed {
  /** The calls as sent, step by step. */
  steps: GeneratedCall[][];
  /** What the next model request holds for each step: one result per call, in order. */
  results: Array<Array<{ call_id: string }>>;
  /** Side effects the tools performed, by `call_id` (each tool bumps its own counter). */
  sideEffects: Map<string, number>;
  bundle: Bundle;
  publicKey: string;
}

/** Counts of what the generated runs held, for the fuzz report. */
export class Tally {
  readonly #started = Date.now();
  /** Printed every `progressEvery` runs of a long (fuzz) pass, so a pass cut short still reports. */
  constructor(
    readonly name = 'generated runs',
    readonly progressEvery = process.env.CALLGATE_FUZZ_RUNS
      ? Number(process.env.CALLGATE_FUZZ_PROGRESS ?? 500)
      : 0,
  ) {}

  runs = 0;
  calls = 0;
  ran = 0;
  refused = 0;
  asks = 0;
  normalized = 0;
  refusals = 0;

  add(records: readonly LedgerRecord[]): void {
    this.runs++;
    for (const record of records) {
      if (record.type === 'call-decision') {
        this.calls++;
        if (record.error_kind !== undefined || record.effect === 'deny') this.refused++;
        if (record.effect === 'ask') this.asks++;
      } else if (record.type === 'call-end') {
        if (record.outcome === 'ok' || record.outcome === 'error') this.ran++;
        if (record.result_normalized) this.normalized++;
      } else if (record.type === 'refusal') this.refusals++;
    }
    if (this.progressEvery > 0 && this.runs % this.progressEvery === 0)
      process.stdout.write(`${this.name}: ${this}, ${((Date.now() - this.#started) / 1000).toFixed(0)} s\n`);
  }

  toString(): string {
    return `${this.runs} runs, ${this.calls} calls (${this.ran} ran, ${this.refused} refused, ${this.asks} asks), ${this.normalized} results normalised, ${this.refusals} refusal records`;
  }
}

/**
 * Checks the call records of a run (docs/ledger.md, invariants 1 and 2); throws an Error naming
 * the first violation:
 * - every decided call attempt has exactly one `call-end`; a refused one ends `denied`; a
 *   `grant_consumed` only on a call that ran; no call ran without being cleared (allowed, or
 *   asked and approved).
 * Returns, by call id, how many cleared executions the records allow: call-ends saying the call
 * ran (`ok`/`error`) or may have (`decided-not-completed` after being cleared).
 */
export function checkCallEnds(records: readonly LedgerRecord[]): Map<string, number> {
  const decisions = records.filter((record) => record.type === 'call-decision');
  const ends = records.filter((record) => record.type === 'call-end');
  const approved = new Set(
    records
      .filter((record) => record.type === 'approval-response' && record.status === 'approved')
      .map((record) => (record.type === 'approval-response' ? record.call_id : '')),
  );
  const fail = (message: string): never => {
    throw new Error(message);
  };
  const cleared = new Map<string, number>();
  for (const decision of decisions) {
    const key = `${decision.call_id}\u0000${decision.attempt}`;
    const matching = ends.filter(
      (end) => end.call_id === decision.call_id && end.attempt === decision.attempt,
    );
    if (matching.length !== 1) fail(`call ${key} has ${matching.length} call-ends`);
    const end = matching[0] as (typeof ends)[number];
    const refused = decision.error_kind !== undefined || decision.effect === 'deny';
    if (refused && end.type === 'call-end' && end.outcome !== 'denied')
      fail(`refused call ${decision.call_id} ended ${end.outcome}`);
    const ranEnd = end.type === 'call-end' && (end.outcome === 'ok' || end.outcome === 'error');
    if (end.type === 'call-end' && end.grant_consumed && !ranEnd)
      fail(`call ${decision.call_id} ended ${end.outcome} claiming its grant`);
    const isCleared = !refused && (decision.effect === 'allow' || approved.has(decision.call_id));
    if (ranEnd && !isCleared) fail(`call ${decision.call_id} ran without being cleared`);
    // A cleared call whose outcome never came (the agent hung or died) may have run: the record
    // says `decided-not-completed`, not that it did not run.
    const mayHaveRun =
      ranEnd || (isCleared && end.type === 'call-end' && end.outcome === 'decided-not-completed');
    if (mayHaveRun) cleared.set(decision.call_id, (cleared.get(decision.call_id) ?? 0) + 1);
  }
  return cleared;
}

/**
 * Checks one run from outside; throws an Error naming the first violation:
 * - one result per call in each step, whose call ids are the decisions' ids;
 * - the call records hold (see {@link checkCallEnds});
 * - no side effect of a call that was not cleared, and at most one per cleared call attempt;
 * - the bundle verifies `--strict` against the pinned key.
 */
export function checkRun(observed: Observed, tally?: Tally): void {
  const records = observed.bundle.records as LedgerRecord[];
  tally?.add(records);
  const fail = (message: string): never => {
    throw new Error(message);
  };
  for (let step = 0; step < observed.steps.length; step++) {
    const sent = observed.steps[step]?.length ?? 0;
    const got = observed.results[step]?.length ?? 0;
    if (got !== sent) fail(`step ${step}: ${sent} calls but ${got} results in the next model request`);
  }
  const cleared = checkCallEnds(records);
  for (const [callId, count] of observed.sideEffects) {
    const allowedRuns = cleared.get(callId) ?? 0;
    if (count > allowedRuns)
      fail(`call ${callId} had ${count} side effects but ${allowedRuns} cleared executions were recorded`);
  }
  const report = verifyBundle(JSON.parse(JSON.stringify(observed.bundle)), {
    publicKey: observed.publicKey,
    strict: true,
  });
  if (!report.ok) fail(`the bundle does not verify --strict: ${JSON.stringify(report.failures.slice(0, 3))}`);
}
