// Regular expressions that callgate runs on input it does not control (tool schemas registered by
// agents, CEL `matches` in policies) go through RE2, whose matching time is linear in the input:
// no pattern and argument pair can hold the event loop. RE2 has no backreferences and no
// lookaround; a pattern that needs them is refused with the place it came from.

import { RE2JS } from 're2js';

/**
 * A compiled linear-time pattern: `test(text)` is true when it matches anywhere in `text`.
 * `toString()` is `/<source>/u`, as for a RegExp: Ajv keys its compiled patterns by it.
 */
export interface LinearRegex {
  readonly source: string;
  test(text: string): boolean;
  toString(): string;
}

const CACHE_LIMIT = 1024;
const cache = new Map<string, LinearRegex>();

/**
 * Compiles `pattern` (ECMAScript syntax, the subset RE2 accepts; matched on code points, as
 * with the `u` flag) with re2js, a JavaScript port of RE2: plain JavaScript, so no heap of its own
 * to exhaust and no native build per Node version. Compiled patterns are cached (1024 entries,
 * oldest dropped first). `flags`: only `u` (and none) are accepted: what Ajv passes.
 * @throws Error whose message says why RE2 refuses the pattern.
 */
export function linearRegex(pattern: string, flags = 'u'): LinearRegex {
  if (flags !== 'u' && flags !== '')
    throw new Error(`unsupported regular expression flags ${JSON.stringify(flags)}`);
  const cached = cache.get(pattern);
  if (cached) return cached;
  const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  const regex: LinearRegex = {
    source: pattern,
    test: (text) => compiled.test(text),
    toString: () => `/${pattern}/u`,
  };
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(pattern, regex);
  return regex;
}

/**
 * The `code.regExp` option of Ajv: every `pattern` and `patternProperties` key compiles with RE2.
 * Ajv calls it as `regExp(pattern, flags)` and uses the result's `test`.
 */
export const ajvLinearRegExp = Object.assign(
  (pattern: string, flags?: string) => linearRegex(pattern, flags ?? 'u'),
  {
    code: 'linearRegex',
  },
);

/** Why RE2 refuses `pattern`, or undefined when it compiles. */
export function linearRegexProblem(pattern: string): string | undefined {
  try {
    linearRegex(pattern);
    return undefined;
  } catch (error) {
    return (error as Error).message.split('\n')[0];
  }
}

/**
 * Every regular expression in a JSON Schema with its JSON pointer-like path: `pattern` values and
 * `patternProperties` keys, in every subschema (values under `const`, `enum`, `default` and
 * `examples` are data, not schemas, and are skipped).
 */
export function schemaPatterns(schema: unknown, path = '#'): Array<{ path: string; pattern: string }> {
  const found: Array<{ path: string; pattern: string }> = [];
  const visit = (node: unknown, at: string, depth: number): void => {
    if (depth > 64 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${at}/${index}`, depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      const child = `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === 'pattern' && typeof value === 'string') found.push({ path: child, pattern: value });
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        for (const name of Object.keys(value)) found.push({ path: `${child}/${name}`, pattern: name });
      }
      visit(value, child, depth + 1);
    }
  };
  visit(schema, path, 0);
  return found;
}

const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
