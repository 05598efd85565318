// CEL conditions (`when:`) with @marcbachmann/cel-js: compiled once at load, evaluated per call.
//
// Two environments. The checking one declares `call`, `run`, `tool` and `provenance` with their
// exact fields, so a misspelt field (`provenance.untrustd`) or a type mistake is refused at load.
// The running one declares them as plain maps: cel-js converts schema-typed values into wrapper
// objects on every evaluation (about 3x slower), and the values we pass are exactly those shapes.
//
// Numbers: a JSON number that is a safe integer is handed to CEL as an `int` (a BigInt), any
// other as a `double`. CEL compares int and double across types, so `args.amount > 1000` holds
// for 1500 and 1000.5 alike, and int arithmetic (`args.count + 1`, `args.n % 2`, list indexes)
// works on whole numbers. Mixed arithmetic (`args.amount + 0.5` on a whole amount) has no CEL
// overload; write `double(args.amount) + 0.5`.
//
// `matches` runs on RE2 (linear time): cel-js's own overload uses the backtracking RegExp, so each
// compiled program's `matches` calls are pointed at a `linearMatches` overload of the running
// environment. A literal pattern RE2 refuses is a load error at its position.
//
// A numeric literal is judged as written, by the gate's own number rule: a double literal whose
// digits a double does not hold (`1e-400` reads as 0, `1000.00000000000001` as 1000) and an int
// literal beyond CEL's 64-bit range are load errors quoting the literal, never silently rounded.

import type { ToolAnnotations, Trust } from '@callgate/protocol';
import { Environment } from '@marcbachmann/cel-js';
import { numberHeldExactly } from '../json/exact-number.js';
import { linearRegex, linearRegexProblem } from '../regex/linear-regex.js';
import type { AnnotationHint, PolicyInput } from './types.js';

/** The variables a condition sees, with integers as BigInts. */
export interface ConditionContext {
  readonly args: unknown;
  readonly call: { readonly id: string; readonly attempt: bigint | number; readonly minted: boolean };
  readonly run: PolicyInput['run'];
  readonly tool: { readonly name: string; readonly trust: Trust; readonly annotations: EffectiveAnnotations };
  readonly provenance: PolicyInput['provenance'];
}

/** A tool's annotations with every MCP hint present (absent hints take their MCP defaults). */
export type EffectiveAnnotations = Readonly<Record<AnnotationHint, boolean>> & { readonly title?: string };

/** What evaluating a condition gave: a match, no match, or why it could not be evaluated. */
export type ConditionOutcome = true | false | { readonly error: string };

/** A compiled condition. */
export interface Condition {
  readonly text: string;
  evaluate(context: ConditionContext): ConditionOutcome;
}

/** Why a condition does not compile: a sentence and the character offset it concerns. */
export interface ConditionProblem {
  readonly message: string;
  readonly offset: number;
}

const ARGUMENT_DEPTH_LIMIT = 64;

let checkingEnvironment: Environment | undefined;
let runningEnvironment: Environment | undefined;

function environments(): { checking: Environment; running: Environment } {
  checkingEnvironment ??= new Environment()
    .registerVariable('args', 'map')
    .registerVariable({ name: 'call', schema: { id: 'string', attempt: 'int', minted: 'bool' } })
    .registerVariable({
      name: 'run',
      schema: { id: 'string', principal: 'string', framework: 'string', labels: 'map<string, string>' },
    })
    .registerVariable({
      name: 'tool',
      schema: {
        name: 'string',
        trust: 'string',
        annotations: {
          title: 'string',
          readOnlyHint: 'bool',
          destructiveHint: 'bool',
          idempotentHint: 'bool',
          openWorldHint: 'bool',
        },
      },
    })
    .registerVariable({ name: 'provenance', schema: { untrusted: 'bool', sources: 'list<string>' } });
  runningEnvironment ??= new Environment()
    .registerVariable('args', 'map')
    .registerVariable('call', 'map')
    .registerVariable('run', 'map')
    .registerVariable('tool', 'map')
    .registerVariable('provenance', 'map')
    .registerFunction('string.linearMatches(string): bool', (text: string, pattern: string) => {
      let compiled: ReturnType<typeof linearRegex>;
      try {
        compiled = linearRegex(pattern);
      } catch (error) {
        throw new Error(
          `matches: the pattern ${JSON.stringify(pattern)} is not valid RE2: ${(error as Error).message}`,
        );
      }
      return compiled.test(text);
    });
  return { checking: checkingEnvironment, running: runningEnvironment };
}

/**
 * Compiles the CEL condition `text`: parses it, type-checks it against the declared variables
 * and requires a `bool` (or a dynamic value, checked when evaluated). Never throws.
 */
export function compileCondition(text: string): { condition: Condition } | { problem: ConditionProblem } {
  const { checking, running } = environments();
  let program: (context: ConditionContext) => unknown;
  try {
    program = running.parse(text);
  } catch (error) {
    return { problem: outOfRangeLiteral(text, error) ?? celProblem('CEL syntax error', error) };
  }
  const checked = checking.check(text);
  if (!checked.valid) return { problem: celProblem('CEL type error', checked.error) };
  const regexProblem = useLinearMatches((program as { ast?: unknown }).ast);
  if (regexProblem) return { problem: regexProblem };
  const literal = inexactLiteral((program as { ast?: unknown }).ast, text);
  if (literal) return { problem: literal };
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return {
      problem: { message: `the condition gives ${checked.type ?? 'no value'}, not a bool`, offset: 0 },
    };
  }
  return {
    condition: {
      text,
      evaluate(context: ConditionContext): ConditionOutcome {
        try {
          const result = program(context);
          if (typeof result === 'boolean') return result;
          return { error: `the condition gave ${celTypeName(result)}, not a bool` };
        } catch (error) {
          return { error: errorSummary(error) };
        }
      },
    },
  };
}

/**
 * The CEL variables for one call: arguments with safe integers as BigInts, `call.attempt` as a
 * BigInt, `tool.trust` (untrusted when the tool says so or the policy lists it) and every
 * annotation hint filled in.
 */
export function conditionContext(input: PolicyInput, policyUntrusted: boolean): ConditionContext {
  const trust: Trust = policyUntrusted || input.tool.trust === 'untrusted' ? 'untrusted' : 'trusted';
  return {
    args: toCelValue(input.args, 0),
    call: {
      id: input.call.id,
      attempt: toCelValue(input.call.attempt, 0) as bigint | number,
      minted: input.call.minted,
    },
    run: input.run,
    tool: { name: input.tool.name, trust, annotations: effectiveAnnotations(input.tool.annotations) },
    provenance: input.provenance,
  };
}

/**
 * A tool's hints with the MCP 2025-11-25 defaults for absent ones: readOnlyHint false,
 * destructiveHint true (false for a read-only tool), idempotentHint false, openWorldHint true.
 */
export function effectiveAnnotations(annotations: ToolAnnotations | undefined): EffectiveAnnotations {
  const readOnly = hint(annotations?.readOnlyHint, false);
  const effective = {
    readOnlyHint: readOnly,
    destructiveHint: hint(annotations?.destructiveHint, !readOnly),
    idempotentHint: hint(annotations?.idempotentHint, false),
    openWorldHint: hint(annotations?.openWorldHint, true),
  };
  return typeof annotations?.title === 'string' ? { ...effective, title: annotations.title } : effective;
}

/** A declared hint, or the default when it is absent or not a boolean (a misbehaving server). */
function hint(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

/** A JSON value as CEL reads it: safe integers become BigInts (CEL `int`), the rest is kept. */
export function toCelValue(value: unknown, depth: number): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null || depth >= ARGUMENT_DEPTH_LIMIT) return value;
  if (Array.isArray(value)) return value.map((item) => toCelValue(item, depth + 1));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const result: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) {
    result[key] = toCelValue((value as Record<string, unknown>)[key], depth + 1);
  }
  return result;
}

interface AstNode {
  op: string;
  args: unknown;
  start?: number;
}

function isAstNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as AstNode).op === 'string';
}

/**
 * Points every `.matches(…)` call of a parsed program at `linearMatches` (RE2) and checks literal
 * patterns now. A parsed program's tree is `{op, args}` nodes; a method call is
 * `{op: 'rcall', args: [name, receiver, [arguments]]}`.
 */
function useLinearMatches(ast: unknown): ConditionProblem | undefined {
  let problem: ConditionProblem | undefined;
  const visit = (value: unknown, depth: number): void => {
    if (depth > 256) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    if (!isAstNode(value)) return;
    const args = value.args;
    if (value.op === 'rcall' && Array.isArray(args) && args[0] === 'matches') {
      args[0] = 'linearMatches';
      const pattern = Array.isArray(args[2]) ? args[2][0] : undefined;
      if (
        problem === undefined &&
        isAstNode(pattern) &&
        pattern.op === 'value' &&
        typeof pattern.args === 'string'
      ) {
        const why = linearRegexProblem(pattern.args);
        const offset = pattern.start ?? 0;
        if (why !== undefined) {
          problem = {
            message: `CEL regex error at character ${offset + 1}: the pattern ${JSON.stringify(pattern.args)} is not supported (matches runs on RE2, which has no backreferences or lookaround): ${why}`,
            offset,
          };
        }
      }
    }
    visit(args, depth + 1);
  };
  if (!isAstNode(ast)) return { message: 'internal: the CEL program has no syntax tree to check', offset: 0 };
  visit(ast, 0);
  return problem;
}

const INT64_MAGNITUDE = 2n ** 63n;
const NUMBER_LITERAL = /^(?:[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+)$/;

/**
 * The first numeric literal of a parsed program that CEL would not read as written: a double
 * literal (`{op: 'value', args: number}`) whose text `numberHeldExactly` refuses, or an int
 * literal beyond ±2^63 (CEL ints are 64-bit).
 */
function inexactLiteral(ast: unknown, text: string): ConditionProblem | undefined {
  let problem: ConditionProblem | undefined;
  const visit = (value: unknown, depth: number): void => {
    if (problem !== undefined || depth > 256) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    if (!isAstNode(value)) return;
    if (value.op === 'value' && (typeof value.args === 'number' || typeof value.args === 'bigint')) {
      const start = value.start ?? 0;
      const end = (value as { end?: number }).end ?? text.length;
      const written = text.slice(start, end);
      // A value the parser made itself (no literal text of its own) is not judged here.
      if (!NUMBER_LITERAL.test(written)) return;
      if (typeof value.args === 'number' && !numberHeldExactly(written)) {
        problem = {
          message: `CEL number error at character ${start + 1}: the number ${written} has digits a double does not hold (it would be read as ${String(value.args)}); write a number a double holds exactly`,
          offset: start,
        };
      } else if (
        typeof value.args === 'bigint' &&
        (value.args > INT64_MAGNITUDE || value.args < -INT64_MAGNITUDE)
      ) {
        problem = {
          message: `CEL number error at character ${start + 1}: the integer ${written} is beyond the 64-bit range of a CEL int`,
          offset: start,
        };
      }
      return;
    }
    visit(value.args, depth + 1);
  };
  visit(ast, 0);
  return problem;
}

/**
 * A numeric literal the CEL parser refused as out of a double's range (`1e400`), quoted as
 * written; undefined for any other syntax error.
 */
function outOfRangeLiteral(text: string, error: unknown): ConditionProblem | undefined {
  if (!/Invalid number/.test(errorSummary(error))) return undefined;
  const offset = (error as { range?: { start?: number } } | undefined)?.range?.start ?? 0;
  const written = /^[0-9][0-9.eE+-]*/.exec(text.slice(offset))?.[0];
  if (written === undefined) return undefined;
  return {
    message: `CEL number error at character ${offset + 1}: the number ${written} is out of a double's range; write a number a double holds exactly`,
    offset,
  };
}

function celProblem(label: string, error: unknown): ConditionProblem {
  const range = (error as { range?: { start?: number } } | undefined)?.range;
  const offset = typeof range?.start === 'number' ? range.start : 0;
  return { message: `${label} at character ${offset + 1}: ${errorSummary(error)}`, offset };
}

function errorSummary(error: unknown): string {
  const summary = (error as { summary?: unknown } | undefined)?.summary;
  if (typeof summary === 'string' && summary !== '') return summary;
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}

function celTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'number') return 'a double';
  if (typeof value === 'string') return 'a string';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}
