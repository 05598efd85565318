// The generated harness for integrations outside this process (the Haystack hook's hypothesis
// test): the same vocabulary, model steps and checks as every other integration, served over
// stdin/stdout, one JSON request per line, one JSON answer per line. Run with Node 22:
//   tools/node22/node_modules/node/bin/node --experimental-transform-types --no-warnings \
//     test/conformance/generated/check-service.ts
// Requests:
// - {"op":"vocabulary"} → {vocabulary, policy, tools, counterexamples}: what runs are drawn from;
// - {"op":"steps","run":GeneratedRun} → {steps}: each call as a model writes it (id, tool,
//   arguments text with NaN as its token and big integers with their digits, index) and, for
//   its tool act, the result text the tool returns (JSON text, non-canonical values included);
// - {"op":"check","run","results","executed","bundle","publicKey"} → {ok:true} or
//   {ok:false,violation}: `executed` is the arguments (JSON text) of every tool execution; each
//   is counted as a side effect of the call whose position its arguments name (the n-th decision);
// - {"op":"numbers","texts":[...]} → {strings}: `String(Number(text))` of each number text (a
//   Python float's repr, or NaN, Infinity, -Infinity), ECMAScript's Number::toString;
// - {"op":"normalize","values":[Tagged...]} → {recorded:[{value,reasons}]}: what core's
//   `recordable` commits for each value (callgate-normalize/1), the value given as a tagged tree
//   (see `untag`) so that NaN, big integers and lone surrogates arrive as JavaScript values;
// - {"op":"exact","texts":[...]} → {held:[...]}: core's `numberHeldExactly` of each number token
//   (whether its double holds its digits exactly, docs/ledger.md invariant 4).
import { createInterface } from 'node:readline';
import { numberHeldExactly, recordable } from '@callgate/core/json';
import type { LedgerRecord } from '@callgate/protocol';
import { checkRun } from './checks.ts';
import {
  COUNTEREXAMPLES,
  GENERATED_POLICY,
  GENERATED_TOOLS,
  type GeneratedRun,
  indexOfArguments,
  modelSteps,
  resultOf,
  VOCABULARY,
} from './runs.ts';

/** JSON text for a value, keeping what JSON.stringify cannot: NaN/Infinity tokens, BigInt digits. */
function looseJson(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return `[${value.map(looseJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, entry]) => `${JSON.stringify(key)}:${looseJson(entry)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * A value sent as a tagged tree: `["z"]` null, `["b", boolean]`, `["n", text]` a number (a
 * Python float's repr, `NaN`, `Infinity`), `["i", digits]` an integer (a bigint beyond
 * ±(2^53−1), as the server's lossless parser keeps it), `["s", string]`, `["a", [items]]`,
 * `["o", [[key, item], ...]]` (own data properties, `__proto__` included).
 */
type Tagged =
  | ['z']
  | ['b', boolean]
  | ['n', string]
  | ['i', string]
  | ['s', string]
  | ['a', Tagged[]]
  | ['o', [string, Tagged][]];

function untag(tagged: Tagged): unknown {
  switch (tagged[0]) {
    case 'z':
      return null;
    case 'b':
    case 's':
      return tagged[1];
    case 'n':
      return Number(tagged[1]);
    case 'i': {
      const big = BigInt(tagged[1]);
      return big >= -BigInt(Number.MAX_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(big)
        : big;
    }
    case 'a':
      return tagged[1].map(untag);
    case 'o':
      return Object.fromEntries(tagged[1].map(([key, item]) => [key, untag(item)]));
  }
}

// biome-ignore lint/suspicious/noExplicitAny: requests are read field by field
function answer(request: any): unknown {
  switch (request.op) {
    case 'vocabulary':
      return {
        vocabulary: VOCABULARY,
        policy: GENERATED_POLICY,
        tools: GENERATED_TOOLS,
        counterexamples: COUNTEREXAMPLES,
      };
    case 'steps':
      return {
        steps: modelSteps(request.run as GeneratedRun).map((step) =>
          step.map((call) => ({
            id: call.id ?? null,
            tool: call.tool,
            text: call.text,
            index: call.index,
            act: call.call.act,
            reviewer: call.call.reviewer,
            arguments: call.call.arguments,
            result: looseJson(resultOf(call.call.act, call.index)),
          })),
        ),
      };
    case 'check': {
      const records = request.bundle.records as LedgerRecord[];
      // The hook decides a step's calls in one request, in the model's order, so the n-th
      // call-decision is the n-th generated call's (its id may be minted); an execution is a side
      // effect of the call whose position its arguments name.
      const run = request.run as GeneratedRun;
      const decisions = records.filter((record) => record.type === 'call-decision');
      const calls = modelSteps(run).flat();
      const sideEffects = new Map<string, number>();
      for (const text of request.executed as string[]) {
        const index = indexOfArguments(JSON.parse(text));
        const decision = decisions[index];
        const callId =
          decision && decision.tool === calls[index]?.tool
            ? decision.call_id
            : `(undecided arguments ${text})`;
        sideEffects.set(callId, (sideEffects.get(callId) ?? 0) + 1);
      }
      try {
        checkRun({
          steps: (request.run as GeneratedRun).steps,
          results: request.results,
          sideEffects,
          bundle: request.bundle,
          publicKey: request.publicKey,
        });
        return { ok: true };
      } catch (error) {
        return { ok: false, violation: (error as Error).message };
      }
    }
    case 'numbers':
      return { strings: (request.texts as string[]).map((text) => String(Number(text))) };
    case 'exact':
      return { held: (request.texts as string[]).map((text) => numberHeldExactly(text)) };
    case 'normalize':
      return {
        recorded: (request.values as Tagged[]).map((tagged) => {
          const { value, reasons } = recordable(untag(tagged));
          return { value: reasons.length > 0 ? value : null, reasons };
        }),
      };
    default:
      return { ok: false, violation: `unknown op ${String(request.op)}` };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let reply: unknown;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = { ok: false, violation: `the request could not be read: ${(error as Error).message}` };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
