// How a field is named in every message about a value that does not validate: one spelling
// (`tools[0].inputSchema`, `upstreams[1].http.url`, `body.calls[0].tool`) for the HTTP API, the
// config file, the gateway's upstreams and policies alike.
import type { z } from 'zod';

/**
 * A path as a person reads it: `where` (`body`, `query`, or '' for a file's root) followed by
 * each key, dotted (`.tool`) when it is an identifier, bracketed (`[0]`, `["a b"]`) otherwise.
 *
 * @param path keys and indexes from the root to the field.
 * @returns e.g. `body.calls[0].tool`, or `rules[1].match.tools[0]` with `where` ''.
 */
export function formatPath(path: readonly PropertyKey[], where = ''): string {
  let text = where;
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) text += text === '' ? key : `.${key}`;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}

/** The first problem a schema found in a value, located from the value's root. */
export interface ValidationProblem {
  /** Keys and indexes from the root to the offending value, or to an unknown field's key. */
  path: PropertyKey[];
  /** What is wrong (`expected string, received number`, `unknown field`). */
  message: string;
  /** True when `path` ends at a key that is not allowed (its position is the key's). */
  unknownField: boolean;
}

type Issue = z.core.$ZodIssue;

/**
 * The first problem of a failed validation (zod), in callgate's words. An unknown key is
 * `unknown field` at the key. A value that matches none of a union's options is reported through
 * the option it came closest to (the one whose first problem lies deepest, e.g. `tools[0].name`
 * of a list of specs, rather than the bare `tools: Invalid input`); when every option refused the
 * value's type, the message lists the types expected.
 */
export function problemOf(error: z.ZodError): ValidationProblem {
  return problemAt(error.issues[0], []);
}

function problemAt(issue: Issue | undefined, base: readonly PropertyKey[]): ValidationProblem {
  if (!issue) return { path: [...base], message: 'invalid', unknownField: false };
  const path = [...base, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    return {
      path: [...path, issue.keys[0] ?? ''],
      message: `unknown field${issue.keys.length > 1 ? `s ${names}` : ''}`,
      unknownField: true,
    };
  }
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const firsts = issue.errors.map((branch) => branch[0]).filter((first) => first !== undefined);
    // How far an option got: a type mismatch at the union's own value scores lowest.
    const reach = (first: Issue) =>
      first.code === 'invalid_type' && first.path.length === 0 ? -1 : first.path.length;
    const closest = firsts.reduce<Issue | undefined>(
      (best, first) => (best === undefined || reach(first) > reach(best) ? first : best),
      undefined,
    );
    if (closest && reach(closest) >= 0) return problemAt(closest, path);
    const expected = firsts.flatMap((first) =>
      first.code === 'invalid_type' ? [TYPE_WORDS[first.expected] ?? first.expected] : [],
    );
    const received = /received (\w+)/.exec(firsts[0]?.message ?? '')?.[1];
    if (expected.length > 0) {
      return {
        path,
        message: `expected ${[...new Set(expected)].join(' or ')}${received ? `, received ${received}` : ''}`,
        unknownField: false,
      };
    }
  }
  const words = inPlainWords(issue);
  if (words !== undefined) return { path, message: words, unknownField: false };
  // zod's own words for an enum (`Invalid option: expected one of "a"|"b"`); a schema's own
  // message for it is kept as written.
  if (
    issue.code === 'invalid_value' &&
    issue.message.startsWith('Invalid option: ') &&
    issue.values.length > 0
  ) {
    const values = issue.values.map((value) => JSON.stringify(value)).join(', ');
    return { path, message: `must be one of ${values}`, unknownField: false };
  }
  return { path, message: issue.message.replace(/^Invalid input: /, ''), unknownField: false };
}

/** What a JSON value of each type zod names is called in messages. */
const TYPE_WORDS: Readonly<Record<string, string>> = { record: 'object', map: 'object', int: 'integer' };

/** How many of what `origin` counts (`too_small`/`too_big`): characters of a string, items of a list. */
function countOf(origin: string, limit: number | bigint): string {
  const n = Number(limit);
  if (origin === 'string') return `${n} character${n === 1 ? '' : 's'}`;
  if (origin === 'array' || origin === 'set') return `${n} item${n === 1 ? '' : 's'}`;
  return String(n);
}

/**
 * zod's default message for `issue` in callgate's words (`missing (expected string)`, `must be at
 * least 16 characters`, `must be an http:// or https:// URL`), or undefined to keep the message: a
 * schema's own message is always kept as written.
 */
function inPlainWords(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (!/^Invalid input: expected \w+, received \w+$/.test(issue.message)) return undefined;
      const expected = TYPE_WORDS[issue.expected] ?? issue.expected;
      const received = /received (\w+)$/.exec(issue.message)?.[1];
      if (received === 'undefined') return `missing (expected ${expected})`;
      return `expected ${expected}, received ${TYPE_WORDS[received ?? ''] ?? received}`;
    }
    case 'too_small':
    case 'too_big': {
      if (!/^Too (?:small|big): /.test(issue.message)) return undefined;
      const small = issue.code === 'too_small';
      const limit = small ? issue.minimum : issue.maximum;
      if (issue.origin === 'string' && small && Number(limit) === 1 && issue.inclusive !== false)
        return 'must not be empty';
      const bound = issue.exact
        ? 'exactly'
        : issue.inclusive === false
          ? small
            ? 'more than'
            : 'less than'
          : small
            ? 'at least'
            : 'at most';
      const count = countOf(issue.origin, limit);
      return issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set'
        ? `must have ${bound} ${count}`
        : `must be ${bound} ${count}`;
    }
    case 'invalid_format':
      if (issue.format === 'url' && issue.message === 'Invalid URL')
        return 'must be an http:// or https:// URL';
      return undefined;
    default:
      return undefined;
  }
}
