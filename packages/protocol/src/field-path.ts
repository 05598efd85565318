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
    const expected = firsts.flatMap((first) => (first.code === 'invalid_type' ? [first.expected] : []));
    const received = /received (\w+)/.exec(firsts[0]?.message ?? '')?.[1];
    if (expected.length > 0) {
      return {
        path,
        message: `expected ${[...new Set(expected)].join(' or ')}${received ? `, received ${received}` : ''}`,
        unknownField: false,
      };
    }
  }
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
