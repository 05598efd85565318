// The JSON Schemas other languages read (test/fixtures/schemas/openapi.json is built from these)
// must accept and refuse what the zod schemas the server validates with accept and refuse. A
// generated test: valid bodies, then random edits (a field removed, replaced by any JSON value,
// an unknown field added), judged by both. The one allowed difference: a refinement JSON Schema
// cannot say (gap `to_ts` before `from_ts`, both or neither of `arguments`/`arguments_digest`),
// which zod alone refuses, with a custom issue. Answers are judged as the OpenAPI document
// describes them: in zod's input mode, where a field a newer server adds is not refused.
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  approveBody,
  consumeGrantBody,
  createKeyBody,
  decideResultSchema,
  decisionsBody,
  endRunBody,
  gapBody,
  messageBody,
  outcomesBody,
  startRunBody,
  verdictSchema,
} from './index.js';

const ajv = new Ajv2020({ strict: false, allErrors: false });

const DIGEST = `sha256:${'a'.repeat(64)}`;
const cases: { name: string; schema: z.ZodType; valid: Record<string, unknown> }[] = [
  { name: 'start run', schema: startRunBody, valid: { framework: 'haystack', labels: { a: 'b' } } },
  {
    name: 'decisions',
    schema: decisionsBody,
    valid: {
      calls: [{ id: 'c-1', tool: 'read', arguments: { path: '/a' }, consume: true }],
      message: { role: 'assistant', content: 'x' },
      tools: [{ name: 'read', inputSchema: { type: 'object' } }],
      outcomes: [{ call_id: 'c-0', outcome: 'ok', result: 1 }],
    },
  },
  { name: 'end run', schema: endRunBody, valid: { status: 'completed', outcomes: [] } },
  { name: 'gap', schema: gapBody, valid: { reason: 'down', from_ts: 1, to_ts: 2, calls: 0 } },
  { name: 'message', schema: messageBody, valid: { role: 'user', content: { a: 1 } } },
  {
    name: 'outcomes',
    schema: outcomesBody,
    valid: { outcomes: [{ call_id: 'c-1', outcome: 'error', error_kind: 'tool-error', duration_ms: 3 }] },
  },
  { name: 'approve', schema: approveBody, valid: { reason: 'fine', arguments: { a: 1 } } },
  {
    name: 'consume grant',
    schema: consumeGrantBody,
    valid: { token: 't', run_id: 'r', call_id: 'c', tool: 'x', arguments_digest: DIGEST },
  },
  { name: 'create key', schema: createKeyBody, valid: { role: 'agent', name: 'bot-1' } },
  {
    name: 'verdict',
    schema: verdictSchema,
    valid: { call_id: 'c', minted: false, attempt: 1, tool: 'x', status: 'allowed', arguments: {} },
  },
  {
    name: 'decide result',
    schema: decideResultSchema,
    valid: { run_id: 'r', verdicts: [], outcomes: [{ call_id: 'c', outcome: 'ok' }] },
  },
];

type Json = unknown;

/** `value` with the thing at `path` replaced by `edit(old)` (undefined removes a field). */
function edited(value: Json, path: readonly (string | number)[], edit: (old: Json) => Json): Json {
  if (path.length === 0) return edit(value);
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = edited(copy[head as number], rest, edit);
    return copy;
  }
  const copy = { ...(value as Record<string, Json>) };
  const next = edited(copy[head as string], rest, edit);
  if (next === undefined) delete copy[head as string];
  else copy[head as string] = next;
  return copy;
}

/** Every path into objects and arrays of `value` (its containers' members). */
function pathsOf(value: Json, base: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => [[...base, index], ...pathsOf(item, [...base, index])]);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [[...base, key], ...pathsOf(item, [...base, key])]);
  }
  return [];
}

describe('the generated JSON Schemas judge bodies as the zod schemas do', () => {
  for (const { name, schema, valid } of cases) {
    it(name, () => {
      const jsonSchema = z.toJSONSchema(schema, {
        io: 'input',
        unrepresentable: 'any',
        target: 'draft-2020-12',
      });
      const validate = ajv.compile(jsonSchema);
      expect(schema.safeParse(valid).success, 'the sample is valid').toBe(true);
      expect(validate(valid), 'the sample is valid').toBe(true);
      const paths = pathsOf(valid);
      const edit = fc.oneof(
        fc.record({ kind: fc.constant('remove' as const), at: fc.constantFrom(...paths) }),
        fc.record({
          kind: fc.constant('replace' as const),
          at: fc.constantFrom(...paths),
          with: fc.jsonValue(),
        }),
        fc.record({
          kind: fc.constant('add' as const),
          at: fc.constantFrom([], ...paths),
          key: fc.string({ maxLength: 8 }),
          with: fc.jsonValue({ maxDepth: 2 }),
        }),
      );
      fc.assert(
        fc.property(fc.array(edit, { minLength: 1, maxLength: 3 }), (edits) => {
          let body: Json = valid;
          for (const change of edits) {
            if (change.kind === 'add') {
              body = edited(body, change.at, (old) =>
                old && typeof old === 'object' && !Array.isArray(old)
                  ? { ...old, [change.key]: change.with }
                  : old,
              );
            } else {
              const replacement = change.kind === 'replace' ? change.with : undefined;
              body = edited(body, change.at, () => replacement);
            }
          }
          const byZod = schema.safeParse(body);
          const bySchema = validate(body);
          if (byZod.success) expect(bySchema, JSON.stringify(body)).toBe(true);
          else if (bySchema) expect(byZod.error.issues.map((issue) => issue.code)).toEqual(['custom']);
        }),
        { numRuns: 300 },
      );
    });
  }
});
