import type { ToolAnnotations } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { compileCondition, conditionContext, effectiveAnnotations, toCelValue } from './conditions.js';
import type { PolicyInput } from './types.js';

const baseInput: PolicyInput = {
  tool: { name: 'pay' },
  args: {},
  call: { id: 'c', attempt: 1, minted: false },
  run: { id: 'r', principal: 'p', framework: 'f', labels: {} },
  provenance: { untrusted: false, sources: [] },
};

/** Evaluates `text` against `args`: true, false or the error text. */
function run(text: string, args: Record<string, unknown>): boolean | string {
  const compiled = compileCondition(text);
  if ('problem' in compiled) throw new Error(compiled.problem.message);
  const outcome = compiled.condition.evaluate(conditionContext({ ...baseInput, args }, false));
  return typeof outcome === 'boolean' ? outcome : outcome.error;
}

describe('toCelValue', () => {
  it('turns safe integers into BigInts and keeps other numbers', () => {
    expect(toCelValue({ a: 3, b: 3.5, c: [1, { d: -0 }], e: 2 ** 60, f: 'x', g: null }, 0)).toEqual({
      a: 3n,
      b: 3.5,
      c: [1n, { d: 0n }],
      e: 2 ** 60,
      f: 'x',
      g: null,
    });
  });

  it('keeps a __proto__ key as data and stops at the depth limit', () => {
    const converted = toCelValue(JSON.parse('{"__proto__": 1}'), 0) as Record<string, unknown>;
    expect(Object.keys(converted)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(converted, '__proto__')?.value).toBe(1n);
    let deep: unknown = 1;
    for (let level = 0; level < 100; level++) deep = [deep];
    expect(() => toCelValue(deep, 0)).not.toThrow();
  });
});

describe('conditionContext', () => {
  it('gives call.attempt as an int, and does not throw on an odd one', () => {
    expect(conditionContext(baseInput, false).call.attempt).toBe(1n);
    expect(
      conditionContext({ ...baseInput, call: { ...baseInput.call, attempt: 1.5 } }, false).call.attempt,
    ).toBe(1.5);
  });

  it('marks the tool untrusted when the policy or the tool says so', () => {
    expect(conditionContext(baseInput, false).tool.trust).toBe('trusted');
    expect(conditionContext(baseInput, true).tool.trust).toBe('untrusted');
    const declared = { ...baseInput, tool: { name: 'pay', trust: 'untrusted' as const } };
    expect(conditionContext(declared, false).tool.trust).toBe('untrusted');
  });
});

describe('effectiveAnnotations', () => {
  it('fills in the MCP defaults', () => {
    expect(effectiveAnnotations(undefined)).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(effectiveAnnotations({ readOnlyHint: true, title: 'Peek' })).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
      title: 'Peek',
    });
    expect(effectiveAnnotations({ readOnlyHint: true, destructiveHint: true }).destructiveHint).toBe(true);
  });

  it('takes the default for a hint that is not a boolean', () => {
    const odd = { readOnlyHint: 'yes', destructiveHint: 'no' } as unknown as ToolAnnotations;
    expect(effectiveAnnotations(odd)).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });
});

describe('cel-js behaviour the policy relies on', () => {
  it('compares int and double across types', () => {
    expect(run('args.amount > 1000', { amount: 1500 })).toBe(true);
    expect(run('args.amount > 1000', { amount: 1000.5 })).toBe(true);
    expect(run('args.amount > 1000', { amount: 1000 })).toBe(false);
    expect(run('args.amount >= 1000.0', { amount: 1000 })).toBe(true);
    expect(run('args.amount == 3', { amount: 3 })).toBe(true);
    expect(run('args.amount in [1, 2, 3]', { amount: 3 })).toBe(true);
  });

  it('has no mixed int/double arithmetic; double() is the way out', () => {
    expect(run('args.amount + 0.5 > 10.0', { amount: 10 })).toContain('no such overload');
    expect(run('double(args.amount) + 0.5 > 10.0', { amount: 10 })).toBe(true);
    expect(run('args.items[args.index] == "b"', { items: ['a', 'b'], index: 1 })).toBe(true);
  });

  it('reports a missing key as an error, which has() avoids', () => {
    expect(run('args.missing > 1', {})).toBe('No such key: missing');
    expect(run('has(args.missing) && args.missing > 1', {})).toBe(false);
  });

  it('does not see inherited properties of argument objects', () => {
    expect(run('has(args.toString)', {})).toBe(false);
    expect(run('"constructor" in args', {})).toBe(false);
  });

  it('refuses at compile time syntax errors, unknown variables, misspelt fields and non-bool types', () => {
    for (const text of [
      'args.x >',
      'nope > 1',
      'run.label == "x"',
      'call.attempt + 1',
      'run.labels.env + 1',
    ]) {
      expect(compileCondition(text)).toHaveProperty('problem');
    }
    expect(compileCondition('args.x')).toHaveProperty('condition');
  });
});
