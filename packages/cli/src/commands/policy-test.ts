// `callgate policy test CASES.yaml`: unit tests for a policy. Each case is a call (tool,
// arguments, run, provenance) and what the policy must do with it (effect, rule ids, scrubbed
// parameters); every failing case is named with its line in the cases file.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isCallgateError, loadPolicy, type Policy, parseJsonLossless, readArguments } from '@callgate/core';
import { yamlNumberToken } from '@callgate/core/json';
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';

const EFFECTS = ['allow', 'ask', 'deny'] as const;
type Effect = (typeof EFFECTS)[number];

/** One case of a cases file, after validation. */
interface PolicyCase {
  name: string;
  /** 1-based line of the case in the cases file. */
  line: number;
  tool: string;
  annotations?: Record<string, boolean>;
  trust?: 'trusted' | 'untrusted';
  arguments: Record<string, unknown>;
  call: { id: string; attempt: number; minted: boolean };
  run: { id: string; principal: string; framework: string; labels: Record<string, string> };
  provenance: { untrusted: boolean; sources: string[] };
  expect: { effect?: Effect; rules?: string[]; scrubbed?: string[]; reason?: string };
}

/** The result of one case. */
export interface CaseResult {
  name: string;
  line: number;
  ok: boolean;
  effect: Effect;
  rules: string[];
  scrubbed: string[];
  /**
   * Set when the gate refuses the call before the policy sees it (effect `deny`, no rules), as a
   * server would: e.g. `tool-args-invalid` for a number a double does not hold.
   */
  refused?: { kind: string; message: string };
  /** What differed from the expectation, one sentence each. */
  failures: string[];
}

/** A problem with the cases file itself (exit code 2). */
class CasesInvalid extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function stringList(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string'))
    throw new CasesInvalid(`${where}: expected a list of strings`);
  return value;
}

function readCase(
  value: unknown,
  index: number,
  line: number,
  file: string,
  defaults: Record<string, unknown>,
) {
  const where = `${file}:${line}: cases[${index}]`;
  if (!isObject(value)) throw new CasesInvalid(`${where}: expected a mapping`);
  const known = ['name', 'tool', 'annotations', 'trust', 'arguments', 'call', 'run', 'provenance', 'expect'];
  for (const key of Object.keys(value))
    if (!known.includes(key))
      throw new CasesInvalid(`${where}: unknown key ${JSON.stringify(key)} (expected ${known.join(', ')})`);
  if (typeof value.tool !== 'string' || value.tool === '')
    throw new CasesInvalid(`${where}.tool: expected a tool name`);
  if (value.name !== undefined && (typeof value.name !== 'string' || value.name.trim() === ''))
    throw new CasesInvalid(`${where}.name: expected a non-empty string`);
  // A mapping given as something else would be read as empty: refused instead.
  for (const key of ['call', 'run', 'provenance'] as const)
    if (value[key] !== undefined && !isObject(value[key]))
      throw new CasesInvalid(`${where}.${key}: expected a mapping`);
  const args = value.arguments ?? {};
  if (!isObject(args)) throw new CasesInvalid(`${where}.arguments: expected a mapping`);
  const expect = value.expect;
  if (!isObject(expect))
    throw new CasesInvalid(`${where}.expect: expected a mapping with effect, rules, scrubbed or reason`);
  for (const key of Object.keys(expect))
    if (!['effect', 'rules', 'scrubbed', 'reason'].includes(key))
      throw new CasesInvalid(
        `${where}.expect: unknown key ${JSON.stringify(key)} (expected effect, rules, scrubbed, reason)`,
      );
  if (Object.keys(expect).length === 0)
    throw new CasesInvalid(
      `${where}.expect: expected at least one of effect, rules, scrubbed, reason (an empty expectation checks nothing)`,
    );
  if (expect.effect !== undefined && !EFFECTS.includes(expect.effect as Effect))
    throw new CasesInvalid(
      `${where}.expect.effect: expected allow, ask or deny, got ${JSON.stringify(expect.effect)}`,
    );
  if (expect.reason !== undefined && typeof expect.reason !== 'string')
    throw new CasesInvalid(`${where}.expect.reason: expected a string`);
  const run = { ...(isObject(defaults.run) ? defaults.run : {}), ...(isObject(value.run) ? value.run : {}) };
  const call = isObject(value.call) ? value.call : {};
  if (call.id !== undefined && typeof call.id !== 'string')
    throw new CasesInvalid(`${where}.call.id: expected a string`);
  if (call.attempt !== undefined && !(Number.isSafeInteger(call.attempt) && (call.attempt as number) >= 1))
    throw new CasesInvalid(`${where}.call.attempt: expected a whole number ≥ 1`);
  if (call.minted !== undefined && typeof call.minted !== 'boolean')
    throw new CasesInvalid(`${where}.call.minted: expected true or false`);
  if (isObject(value.run)) {
    for (const key of ['id', 'principal', 'framework'] as const)
      if (value.run[key] !== undefined && typeof value.run[key] !== 'string')
        throw new CasesInvalid(`${where}.run.${key}: expected a string`);
    const labels = value.run.labels;
    if (
      labels !== undefined &&
      !(isObject(labels) && Object.values(labels).every((label) => typeof label === 'string'))
    )
      throw new CasesInvalid(`${where}.run.labels: expected a mapping of strings`);
  }
  if (provenanceUntrusted(value.provenance) === 'invalid')
    throw new CasesInvalid(`${where}.provenance.untrusted: expected true or false`);
  const provenance = isObject(value.provenance) ? value.provenance : {};
  const tools = isObject(defaults.tools) ? defaults.tools : {};
  const toolDefaults = isObject(tools[value.tool]) ? (tools[value.tool] as Record<string, unknown>) : {};
  const annotations = value.annotations ?? toolDefaults.annotations;
  if (annotations !== undefined && !isObject(annotations))
    throw new CasesInvalid(`${where}.annotations: expected a mapping`);
  const trust = value.trust ?? toolDefaults.trust;
  if (trust !== undefined && trust !== 'trusted' && trust !== 'untrusted')
    throw new CasesInvalid(`${where}.trust: expected trusted or untrusted`);
  const rules = stringList(expect.rules, `${where}.expect.rules`);
  const scrubbed = stringList(expect.scrubbed, `${where}.expect.scrubbed`);
  const testCase: PolicyCase = {
    name: typeof value.name === 'string' ? value.name : `case ${index + 1} (${value.tool})`,
    line,
    tool: value.tool,
    ...(annotations ? { annotations: annotations as Record<string, boolean> } : {}),
    ...(trust ? { trust } : {}),
    arguments: args,
    call: {
      id: typeof call.id === 'string' ? call.id : `case-${index + 1}`,
      attempt: typeof call.attempt === 'number' ? call.attempt : 1,
      minted: call.minted === true,
    },
    run: {
      id: typeof run.id === 'string' ? run.id : 'policy-test',
      principal: typeof run.principal === 'string' ? run.principal : 'policy-test',
      framework: typeof run.framework === 'string' ? run.framework : 'policy-test',
      labels: isObject(run.labels) ? (run.labels as Record<string, string>) : {},
    },
    provenance: {
      untrusted: provenance.untrusted === true,
      sources: stringList(provenance.sources, `${where}.provenance.sources`) ?? [],
    },
    expect: {
      ...(expect.effect !== undefined ? { effect: expect.effect as Effect } : {}),
      ...(rules ? { rules } : {}),
      ...(scrubbed ? { scrubbed } : {}),
      ...(typeof expect.reason === 'string' ? { reason: expect.reason } : {}),
    },
  };
  return testCase;
}

function provenanceUntrusted(value: unknown): 'ok' | 'invalid' {
  if (!isObject(value) || value.untrusted === undefined) return 'ok';
  return typeof value.untrusted === 'boolean' ? 'ok' : 'invalid';
}

/**
 * A case's `arguments` node as the gate would receive it: every number scalar read from its digits
 * as written (YAML 1.2 core schema → JSON number token → the gate's own lossless JSON parse), so
 * that a number a double does not hold stays what was written and the gate's check refuses it,
 * instead of `toJS` rounding it first. `.inf` and `.nan` stay the doubles they are (the gate
 * refuses them too). Keys are set as own properties, never through a prototype setter.
 */
function exactValue(node: unknown, document: Document, path: string, depth: number): unknown {
  if (depth > 256) throw new CasesInvalid(`${path}: nesting deeper than 256`);
  if (isAlias(node)) return exactValue(node.resolve(document), document, path, depth + 1);
  if (isScalar(node)) {
    if (typeof node.value !== 'number' && typeof node.value !== 'bigint') return node.value;
    const source = typeof node.source === 'string' ? node.source : String(node.value);
    const token = yamlNumberToken(source);
    return token === undefined ? Number(node.value) : parseJsonLossless(token, path);
  }
  if (isSeq(node))
    return node.items.map((item, index) => exactValue(item, document, `${path}[${index}]`, depth + 1));
  if (isMap(node)) {
    const result: Record<string, unknown> = {};
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      Object.defineProperty(result, key, {
        value: exactValue(pair.value, document, `${path}.${key}`, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return result;
  }
  return node === null || node === undefined ? null : node;
}

/**
 * Parses a cases file: `{ policy?, tools?, run?, cases: [...] }` (see docs/operations.md).
 * @throws CasesInvalid naming the file, line and key of what is wrong.
 */
function parseCases(text: string, file: string) {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const problem = document.errors[0];
  if (problem) {
    const { line, col } = lineCounter.linePos(problem.pos[0]);
    throw new CasesInvalid(`${file}:${line}:${col}: YAML: ${problem.message.split('\n')[0]}`);
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  if (!isObject(value)) throw new CasesInvalid(`${file}: expected a mapping with cases`);
  for (const key of Object.keys(value))
    if (!['policy', 'tools', 'run', 'cases'].includes(key))
      throw new CasesInvalid(
        `${file}: unknown key ${JSON.stringify(key)} (expected policy, tools, run, cases)`,
      );
  const node = document.get('cases', true);
  if (!isSeq(node) || !Array.isArray(value.cases) || value.cases.length === 0)
    throw new CasesInvalid(`${file}: cases: expected a non-empty list of cases`);
  const cases = value.cases.map((item, index) => {
    const itemNode = node.items[index];
    const offset =
      isMap(itemNode) || isSeq(itemNode)
        ? itemNode.range?.[0]
        : (itemNode as { range?: number[] })?.range?.[0];
    const line = offset === undefined ? 0 : lineCounter.linePos(offset).line;
    const testCase = readCase(item, index, line, file, value);
    const argumentsNode = isMap(itemNode) ? itemNode.get('arguments', true) : undefined;
    if (argumentsNode !== undefined)
      testCase.arguments = exactValue(argumentsNode, document, 'arguments', 0) as Record<string, unknown>;
    return testCase;
  });
  // A result is reported by its name: two cases of one name could not be told apart.
  const lines = new Map<string, number>();
  cases.forEach((testCase, index) => {
    const first = lines.get(testCase.name);
    if (first !== undefined)
      throw new CasesInvalid(
        `${file}:${testCase.line}: cases[${index}].name: ${JSON.stringify(testCase.name)} is already the name of the case at line ${first}`,
      );
    lines.set(testCase.name, testCase.line);
  });
  return { policy: typeof value.policy === 'string' ? value.policy : undefined, cases };
}

/**
 * Runs one case against `policy` as the gate would: its arguments through the gate's own check
 * (a refusal is effect `deny` with the refusal's message as reason, as the ledger records it),
 * then scrubbed, then decided.
 */
function runCase(policy: Policy, testCase: PolicyCase): CaseResult {
  let args: Record<string, unknown>;
  try {
    args = { ...readArguments(testCase.arguments) };
  } catch (error) {
    if (!isCallgateError(error)) throw error;
    return judge(testCase, {
      effect: 'deny',
      rules: [],
      scrubbed: [],
      reason: error.message,
      refused: { kind: error.kind, message: error.message },
    });
  }
  const scrubbed = policy.scrub.filter((name) => Object.hasOwn(args, name));
  for (const name of scrubbed) delete args[name];
  const decision = policy.evaluate({
    tool: {
      name: testCase.tool,
      ...(testCase.annotations ? { annotations: testCase.annotations } : {}),
      trust: testCase.trust ?? (policy.isUntrusted(testCase.tool) ? 'untrusted' : 'trusted'),
    },
    args,
    call: testCase.call,
    run: testCase.run,
    provenance: testCase.provenance,
  });
  return judge(testCase, {
    effect: decision.effect,
    rules: [...decision.rules],
    scrubbed,
    reason: decision.reason,
  });
}

/** What the gate did with a case's call. */
interface CaseVerdict {
  effect: Effect;
  rules: string[];
  scrubbed: string[];
  reason: string;
  refused?: { kind: string; message: string };
}

/** Compares a case's verdict with its expectation. */
function judge(testCase: PolicyCase, decision: CaseVerdict): CaseResult {
  const { scrubbed } = decision;
  const failures: string[] = [];
  const { expect } = testCase;
  const list = (items: readonly string[]) => (items.length === 0 ? '(none)' : items.join(', '));
  if (expect.effect && decision.effect !== expect.effect)
    failures.push(
      decision.refused
        ? `expected effect ${expect.effect}, got deny: the gate refuses the call (${decision.refused.kind}: ${decision.refused.message})`
        : `expected effect ${expect.effect}, got ${decision.effect} (${decision.reason})`,
    );
  if (expect.rules && [...expect.rules].sort().join('\n') !== [...decision.rules].sort().join('\n'))
    failures.push(`expected rules ${list(expect.rules)}, got ${list(decision.rules)}`);
  if (expect.scrubbed && [...expect.scrubbed].sort().join('\n') !== [...scrubbed].sort().join('\n'))
    failures.push(`expected scrubbed ${list(expect.scrubbed)}, got ${list(scrubbed)}`);
  if (expect.reason !== undefined && !decision.reason.includes(expect.reason))
    failures.push(
      `expected the reason to contain ${JSON.stringify(expect.reason)}, got ${JSON.stringify(decision.reason)}`,
    );
  return {
    name: testCase.name,
    line: testCase.line,
    ok: failures.length === 0,
    effect: decision.effect,
    rules: [...decision.rules],
    scrubbed,
    ...(decision.refused ? { refused: decision.refused } : {}),
    failures,
  };
}

/**
 * `callgate policy test CASES.yaml [--policy FILE] [--json]`: loads the policy (the `--policy`
 * option, else the cases file's `policy:` path, relative to the cases file) and runs every case.
 *
 * @returns 0 when every case passes, 1 when any fails, 2 when the cases file or the policy cannot
 *   be read (the message says where: file:line:column).
 */
export async function runPolicyTest(
  file: string,
  options: {
    policy?: string;
    json?: boolean;
    print: (line: string) => void;
    /** Where an error goes (standard error): a cases file or policy that cannot be read. */
    warn: (line: string) => void;
  },
): Promise<number> {
  const { print, warn } = options;
  let parsed: ReturnType<typeof parseCases>;
  let policy: Policy;
  try {
    const text = await readFile(file, 'utf8').catch((error: Error) => {
      throw new CasesInvalid(`cannot read ${file}: ${error.message}`);
    });
    parsed = parseCases(text, file);
    const policyPath = options.policy
      ? resolve(options.policy)
      : parsed.policy
        ? resolve(dirname(file), parsed.policy)
        : undefined;
    if (!policyPath)
      throw new CasesInvalid(`${file}: name the policy: a policy: key in the file, or --policy FILE`);
    const policyText = await readFile(policyPath, 'utf8').catch((error: Error) => {
      throw new CasesInvalid(`cannot read the policy ${policyPath}: ${error.message}`);
    });
    policy = loadPolicy(policyText, { source: policyPath });
  } catch (error) {
    if (error instanceof CasesInvalid || isCallgateError(error)) {
      warn(`callgate policy test: ${(error as Error).message}`);
      return 2;
    }
    throw error;
  }
  const results = parsed.cases.map((testCase) => runCase(policy, testCase));
  const failed = results.filter((result) => !result.ok);
  if (options.json) {
    print(
      JSON.stringify(
        {
          policy_digest: policy.digest,
          passed: results.length - failed.length,
          failed: failed.length,
          cases: results,
        },
        null,
        2,
      ),
    );
  } else {
    for (const result of results) {
      const place = `${file}:${result.line}`;
      if (result.ok) print(`ok    ${result.name} (${place})`);
      else {
        print(`FAIL  ${result.name} (${place})`);
        for (const failure of result.failures) print(`        ${failure}`);
      }
    }
    print(
      `\n${results.length} cases: ${results.length - failed.length} passed, ${failed.length} failed (policy ${policy.digest})`,
    );
  }
  return failed.length === 0 ? 0 : 1;
}
