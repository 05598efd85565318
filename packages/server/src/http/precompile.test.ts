import { decisionsBody } from '@callgate/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testApp } from '../test-support.js';
import { precompileSchema } from './precompile.js';

/** Counts functions generated with `new Function` (how zod compiles an object schema's parser). */
function countCompilations(): { count: () => number; restore: () => void } {
  const original = globalThis.Function;
  let count = 0;
  globalThis.Function = new Proxy(original, {
    construct(target, args) {
      count++;
      return Reflect.construct(target, args);
    },
  });
  return {
    count: () => count,
    restore: () => {
      globalThis.Function = original;
    },
  };
}

let restore = () => {};
afterEach(() => restore());

const step = {
  calls: [{ id: 'c-1', tool: 'read_file', arguments: { path: '/a' }, consume: true }],
  message: { role: 'assistant', content: 'reading' },
  tools: [{ name: 'read_file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }],
  consume: true,
  outcomes: [{ call_id: 'c-0', outcome: 'ok', result: { ok: true }, duration_ms: 2 }],
};

describe('request schemas are compiled when the routes are mounted', () => {
  it('a schema parsed for the first time compiles its object parsers (the counter sees it)', () => {
    const fresh = z.strictObject({ items: z.array(z.strictObject({ name: z.string() })) });
    const counter = countCompilations();
    restore = counter.restore;
    expect(fresh.safeParse({ items: [{ name: 'a' }] }).success).toBe(true);
    expect(counter.count()).toBeGreaterThanOrEqual(2);
  });

  it('after precompileSchema, parsing a nested value compiles nothing', () => {
    const fresh = z.strictObject({
      items: z.array(z.strictObject({ name: z.string(), tags: z.record(z.string(), z.strictObject({})) })),
      get more() {
        return z.array(z.strictObject({ id: z.string() })).optional();
      },
    });
    expect(precompileSchema(fresh)).toBeGreaterThan(5);
    const counter = countCompilations();
    restore = counter.restore;
    expect(fresh.safeParse({ items: [{ name: 'a', tags: { x: {} } }], more: [{ id: 'b' }] }).success).toBe(
      true,
    );
    expect(counter.count()).toBe(0);
  });

  it('once the app is made, the first decision request body parses without compiling anything', async () => {
    // Nothing in this file parsed the protocol's schemas before: createApp's mount compiles them.
    await testApp();
    const counter = countCompilations();
    restore = counter.restore;
    expect(decisionsBody.safeParse(step).success).toBe(true);
    expect(counter.count()).toBe(0);
  });
});
