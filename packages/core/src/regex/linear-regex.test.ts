import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolRegistry, validateArguments } from '../gate/registry.js';
import { compileCondition } from '../policy/conditions.js';
import { linearRegex, schemaPatterns } from './linear-regex.js';

const HOSTILE = '^(a+)+$';
const context = (args: unknown) => ({
  args,
  call: { id: 'c', attempt: 1n, minted: false },
  run: { id: 'r', principal: 'p', framework: 'f', labels: {} },
  tool: {
    name: 't',
    trust: 'trusted' as const,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  provenance: { untrusted: false, sources: [] },
});

describe('linear-time regular expressions', () => {
  it('a catastrophic pattern in an agent-registered schema answers a 40-character argument at once', () => {
    const registry = new ToolRegistry([
      {
        name: 'hostile',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string', pattern: HOSTILE } },
          patternProperties: { [HOSTILE]: { type: 'string' } },
        },
      },
    ]);
    const tool = registry.get('hostile');
    if (!tool) throw new Error('not registered');
    const started = performance.now();
    expect(() => validateArguments(tool, { text: `${'a'.repeat(40)}!` })).toThrow(/must match pattern/);
    expect(() => validateArguments(tool, { [`${'a'.repeat(40)}!`]: 1 })).not.toThrow();
    expect(() => validateArguments(tool, { ['a'.repeat(40)]: 1 })).toThrow(/must be string/);
    expect(performance.now() - started).toBeLessThan(50);
    validateArguments(tool, { text: 'aaaa' });
  });

  it("keeps each schema's own pattern (many patterns in one registry)", () => {
    const registry = new ToolRegistry(
      ['^a+$', '^b+$', '^[0-9]{3}$'].map((pattern, index) => ({
        name: `t${index}`,
        inputSchema: { type: 'object', properties: { v: { type: 'string', pattern } } },
      })),
    );
    const valid = (name: string, v: string) => {
      const tool = registry.get(name);
      if (!tool) throw new Error(name);
      return tool.validate({ v });
    };
    expect([valid('t0', 'aa'), valid('t0', 'bb'), valid('t1', 'bb'), valid('t1', 'aa')]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect([valid('t2', '123'), valid('t2', '12a')]).toEqual([true, false]);
  });

  it('refuses a pattern RE2 cannot run at registration, naming the schema path', () => {
    const registry = new ToolRegistry();
    expect(() =>
      registry.add({
        name: 'backref',
        inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(x)\\1' } } },
      }),
    ).toThrow(
      /tool backref: inputSchema #\/properties\/a\/pattern: the pattern "\(x\)\\\\1" is not supported/,
    );
    expect(() =>
      registry.add({ name: 'look', inputSchema: { type: 'object', patternProperties: { '^(?=a)': {} } } }),
    ).toThrow(/#\/patternProperties\/\^\(\?=a\)/);
  });

  it('finds patterns in every subschema, but not in data keywords', () => {
    expect(
      schemaPatterns({
        properties: { pattern: { pattern: 'p1' }, list: { items: [{ pattern: 'p2' }] } },
        const: { pattern: 'data' },
        anyOf: [{ patternProperties: { k: {} } }],
      }),
    ).toEqual([
      { path: '#/properties/pattern/pattern', pattern: 'p1' },
      { path: '#/properties/list/items/0/pattern', pattern: 'p2' },
      { path: '#/anyOf/0/patternProperties/k', pattern: 'k' },
    ]);
  });

  it('CEL matches runs on RE2, with literal and argument patterns alike', () => {
    const literal = compileCondition(`args.text.matches("${HOSTILE}")`);
    const dynamic = compileCondition('"x".matches(args.pattern) || args.text.matches(args.pattern)');
    if (!('condition' in literal) || !('condition' in dynamic)) throw new Error('did not compile');
    const started = performance.now();
    expect(literal.condition.evaluate(context({ text: `${'a'.repeat(40)}!` }))).toBe(false);
    expect(dynamic.condition.evaluate(context({ text: `${'a'.repeat(40)}!`, pattern: HOSTILE }))).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
    expect(literal.condition.evaluate(context({ text: 'aaa' }))).toBe(true);
    expect(dynamic.condition.evaluate(context({ text: 'b', pattern: '(x)\\1' }))).toEqual({
      error: expect.stringContaining('not valid RE2'),
    });
  });

  it('CEL refuses a literal pattern RE2 cannot run at load, at its position', () => {
    const compiled = compileCondition('args.text.matches("(?<=a)b")');
    expect(compiled).toEqual({
      problem: { message: expect.stringMatching(/^CEL regex error at character 19: .*RE2/), offset: 18 },
    });
  });

  it('agrees with the JavaScript engine on patterns both accept (generated)', () => {
    const atoms = fc.constantFrom('a', 'b', '.', '[ab]', '\\d', 'a*', 'b+', '(a|b)', 'a?', '^', '$', '(ab)+');
    fc.assert(
      fc.property(
        fc.array(atoms, { minLength: 1, maxLength: 6 }),
        fc.stringMatching(/^[ab1]{0,8}$/),
        (parts, text) => {
          const pattern = parts.join('');
          expect(linearRegex(pattern).test(text)).toBe(new RegExp(pattern, 'u').test(text));
        },
      ),
      { numRuns: 300 },
    );
  });
});
