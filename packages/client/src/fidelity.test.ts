// What the caller passed is what the server records, or the client refuses it naming the path:
// never a silent change. Generated values go through the client to the real server app.
import { canonicalJson } from '@callgate/core/crypto';
import { recordable } from '@callgate/core/json';
import { isCallgateError } from '@callgate/protocol';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallgateClient } from './client.js';

const POLICY = `
version: 1
default: deny
rules:
  - id: echoes
    match: { tools: [echo] }
    effect: allow
`;
const ECHO = { name: 'echo', inputSchema: { type: 'object' } };

async function world() {
  const { app, keys } = await testApp({ policy: POLICY, vault: true });
  const client = new CallgateClient({
    url: 'http://callgate.test',
    apiKey: keys.agent,
    fetch: (input, init) => Promise.resolve(app.request(String(input), init)),
  });
  return client;
}

/** Why a value has no JSON form at all (the client must refuse it), or undefined. */
function noJsonForm(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'non-finite';
  if (typeof value === 'string') return value.isWellFormed() ? undefined : 'lone surrogate';
  if (Array.isArray(value)) return value.map(noJsonForm).find((why) => why !== undefined);
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (!key.isWellFormed()) return 'lone surrogate';
      const why = noJsonForm(item);
      if (why) return why;
    }
  }
  return undefined;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The value as the server reads it: a bigint within ±(2^53−1) is a number. */
const asRead = (value: unknown): unknown =>
  typeof value === 'bigint'
    ? value >= -MAX_SAFE && value <= MAX_SAFE
      ? Number(value)
      : value
    : Array.isArray(value)
      ? value.map(asRead)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([name, item]) => [name, asRead(item)]))
        : value;

/** True when the value holds an integer a double cannot hold (the gate refuses it in arguments). */
const unsafe = (value: unknown): boolean =>
  typeof value === 'bigint'
    ? value > MAX_SAFE || value < -MAX_SAFE
    : typeof value === 'number'
      ? Number.isInteger(value) && !Number.isSafeInteger(value)
      : Array.isArray(value)
        ? value.some(unsafe)
        : value !== null && typeof value === 'object' && Object.values(value).some(unsafe);

const depthOf = (value: unknown): number =>
  value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;

const loneSurrogate = fc.constantFrom('\ud800', 'a\udc00', '\udbff!', '😀\ud83d');
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), loneSurrogate);
const key = fc
  .oneof(fc.string(), loneSurrogate)
  .filter((name) => !['__proto__', 'constructor', 'prototype'].includes(name));
const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.1, 1e300),
  fc.double().filter((number) => !Number.isInteger(number) || Number.isSafeInteger(number)),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
  text,
);
const nested = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  ),
})).node;
/** A value, sometimes wrapped in arrays up to past the server's nesting limits. */
const value = fc
  .tuple(nested, fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 90 })))
  .map(([node, depth]) => {
    let wrapped: unknown = node;
    for (let level = 0; level < depth; level++) wrapped = [wrapped];
    return wrapped;
  });

describe('the client keeps what the caller passed, or refuses it naming the path (generated)', () => {
  it('tool-call arguments: the gate sees them as passed, refuses big integers quoting them, or the client refuses', async () => {
    const client = await world();
    const { run_id } = await client.startRun({ framework: 'vitest' });
    let index = 0;
    await fc.assert(
      fc.asyncProperty(value, async (given) => {
        const call = { id: `c${index++}`, tool: 'echo', arguments: { v: given } };
        const why = noJsonForm(given);
        let result: Awaited<ReturnType<CallgateClient['decide']>>;
        try {
          result = await client.decide(run_id, [call], { tools: [ECHO] });
        } catch (error) {
          if (!isCallgateError(error)) throw error;
          if (why) {
            expect(error.kind).toBe('request-invalid');
            expect(String(error.details.path)).toMatch(/^body\.calls\[0\]\.arguments\.v/);
            return;
          }
          // The server refuses the whole request only for nesting past its body limit (80, the
          // body and call add 4 levels).
          expect(error.kind).toBe('request-invalid');
          expect(error.message).toMatch(/nesting deeper than 80/);
          expect(depthOf(given)).toBeGreaterThan(76);
          return;
        }
        expect(why).toBeUndefined();
        const [verdict] = result.verdicts;
        // The gate's arguments limit: 64 levels, the arguments object being the first.
        if (unsafe(given) || depthOf(given) >= 64) {
          expect(verdict?.status).toBe('refused');
          expect(verdict?.error?.kind).toBe('tool-args-invalid');
          if (depthOf(given) < 64) expect(verdict?.error?.message).toMatch(/beyond ±\(2\^53−1\)/);
          return;
        }
        expect(verdict?.status).toBe('allowed');
        expect(canonicalJson(verdict?.arguments)).toBe(canonicalJson(asRead(call.arguments)));
      }),
      { numRuns: 150 },
    );
  });

  it('tool results: recorded as passed, or as the callgate-normalize/1 marker the record names', async () => {
    const client = await world();
    const { run_id } = await client.startRun({ framework: 'vitest' });
    const expected: Array<{ call_id: string; value: unknown; reasons: string[] }> = [];
    let index = 0;
    await fc.assert(
      fc.asyncProperty(value, async (given) => {
        const call_id = `r${index++}`;
        const { verdicts } = await client.decide(run_id, [{ id: call_id, tool: 'echo', arguments: {} }], {
          tools: [ECHO],
          consume: true,
        });
        expect(verdicts[0]?.status).toBe('allowed');
        try {
          await client.recordOutcome(run_id, { call_id, outcome: 'ok', result: given, grant_consumed: true });
        } catch (error) {
          // Past the body's nesting limit (80; the body adds 1) the server refuses the request.
          if (!isCallgateError(error)) throw error;
          expect(error.kind).toBe('request-invalid');
          expect(error.message).toMatch(/nesting deeper than 80/);
          expect(depthOf(given)).toBeGreaterThan(79);
          return;
        }
        const { value: committed, reasons } = recordable(asRead(given));
        expected.push({ call_id, value: committed, reasons });
      }),
      { numRuns: 60 },
    );
    const bundle = (await client.exportRun(run_id, { openings: true })) as {
      records: Array<Record<string, unknown>>;
      openings: Array<{ commitment: string; value: unknown }>;
    };
    const opened = new Map(bundle.openings.map((opening) => [opening.commitment, opening.value]));
    for (const { call_id, value: committed, reasons } of expected) {
      const end = bundle.records.find((record) => record.type === 'call-end' && record.call_id === call_id);
      expect(end?.outcome).toBe('ok');
      expect(end?.result_normalized ?? []).toEqual(reasons);
      expect(opened.has(String(end?.result_commitment)), JSON.stringify({ end, committed })).toBe(true);
      expect(canonicalJson(opened.get(String(end?.result_commitment)))).toBe(canonicalJson(committed));
    }
  });
});
