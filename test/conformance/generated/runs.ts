// The generated conformance harness: whole runs as fast-check values (the checks made after each
// run from outside are in checks.ts). Each integration (core.test.ts, http.test.ts,
// gateway.test.ts, the adapters' generated.test.ts, the Haystack harness through
// check-service.ts) drives the same generated runs through its own real path and hands what it
// observed to `checkRun`.
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
  | 'inexact-decimal'
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

/** Decimal texts whose digits a double does not hold (rounded, underflowing, long). */
export const INEXACT_DECIMALS = [
  '1000.00000000000001',
  '1e-400',
  '0.1000000000000000000001',
  '2.0000000000000001',
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
    case 'inexact-decimal': {
      // Digits a double does not hold, where the policy reads them (`args.amount`) when the tool
      // has a number: JSON.parse would read 1000, 0, 0.1 or 2 (docs/ledger.md, invariant 4).
      const decimal = INEXACT_DECIMALS[index % INEXACT_DECIMALS.length];
      const text = JSON.stringify(base);
      const value =
        'amount' in base
          ? text.replace(`"amount":${base.amount}`, `"amount":${decimal}`)
          : `${text.slice(0, -1)},"x":${decimal}}`;
      return { value, valid: false };
    }
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
    'inexact-decimal',
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
 *   ran only the new one, so the reused call never ran and the model read no result for it;
 * - one call id twice in one step, the first asked and approved, the second allowed: verify
 *   --strict gave the approval to the latest attempt (an approval names its call, not the
 *   attempt), so the approved attempt's `ok` read as a call whose approval was never given.
 *   Verifier only: no fixed row (the HTTP rows' bundles hold no such pair).
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
  { steps: [[call('fresh', 'pay-large', 'object'), call('duplicate', 'read', 'object')]] },
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
