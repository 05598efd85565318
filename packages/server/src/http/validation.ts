import { parseJsonLossless } from '@callgate/core';
import { numberNotHeldMessage } from '@callgate/core/json';
import { CallgateError, formatPath, isCallgateError, problemOf } from '@callgate/protocol';
import type { z } from 'zod';
import { refuseLoneSurrogates } from './committed-values.js';

/** Largest JSON body the API accepts, in bytes: 1 MiB of arguments plus room for the envelope. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024 + 64 * 1024;

/** Largest bundle `POST /v1/verify` accepts, in bytes. */
export const DEFAULT_BUNDLE_LIMIT = 64 * 1024 * 1024;

/** Deepest nesting of objects and arrays a request body may have. */
export const BODY_MAX_DEPTH = 80;

/**
 * Refuses a body declared as anything but JSON (`application/json`, `application/…+json`); no
 * Content-Type is taken as JSON.
 * @throws CallgateError `request-invalid` (path `body`) naming the type given.
 */
export function refuseOtherContentType(contentType: string | undefined): void {
  if (contentType !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType.trim()))
    throw new CallgateError(
      'request-invalid',
      `body: expected Content-Type application/json, got ${contentType}`,
      {
        path: 'body',
      },
    );
}

/**
 * Parses a JSON request body (RFC 8259) with core's strict parser, so that what the gate sees is
 * exactly what was sent: a key given twice with different values is refused, an integer beyond
 * ±(2^53−1) (which `JSON.parse` would silently round) keeps its digits, and keys
 * `__proto__`, `constructor` and `prototype`, lone surrogates and nesting deeper than
 * {@link BODY_MAX_DEPTH}. An empty body reads as `{}` (every body field is then absent).
 *
 * @param text the body, already read within its size limit (see `limitBody` in body-limit.ts).
 * @param limit the body's size limit in bytes (the same one `limitBody` enforced).
 * @throws CallgateError `request-invalid` when the Content-Type is not JSON (path `body`), when the
 *   text is not JSON (`body: malformed JSON: ...` with the parser's position), or with the strict
 *   parser's message and path (a duplicate key's position, the big integer's digits).
 */
export function parseJsonBody(text: string, contentType: string | undefined, limit: number): unknown {
  if (text.trim() === '') return {};
  refuseOtherContentType(contentType);
  try {
    // Unsafe integers keep their digits here (lossless-json numbers): the gate refuses them in
    // tool arguments call by call, quoting the digits as sent, and commits results and messages
    // holding them under callgate-normalize/1, instead of the whole request failing or rounding.
    const body = parseJsonLossless(text, 'body', { maxBytes: limit, maxDepth: BODY_MAX_DEPTH });
    refuseLoneSurrogates(body);
    return body;
  } catch (error) {
    if (!isCallgateError(error) || error.kind !== 'tool-args-invalid') throw error;
    // Text that is not JSON at all keeps the message clients know; only then is it parsed twice.
    try {
      JSON.parse(text);
    } catch (syntax) {
      throw new CallgateError('request-invalid', `body: malformed JSON: ${(syntax as Error).message}`, {
        path: 'body',
      });
    }
    const path = typeof error.details.path === 'string' ? error.details.path : 'body';
    throw new CallgateError('request-invalid', error.message, { path }, { cause: error });
  }
}

/**
 * Validates `value` with `schema`.
 *
 * @param where what the value is, for messages: `body` or `query`.
 * @returns the parsed value.
 * @throws CallgateError `request-invalid` whose message names the offending field path (e.g.
 *   `body.calls[0].tool: expected string, received number`) and whose `details.path` holds it.
 */
export function parseWith<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  where: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problem = problemOf(parsed.error);
  const path = formatPath(problem.path, where);
  const digits = keptDigits(valueAt(value, problem.path));
  // A number the lossless body parse kept as digits (a double does not hold them): say so.
  if (digits !== undefined)
    throw new CallgateError('request-invalid', numberNotHeldMessage(path, digits), { path });
  // A query value arrives as text: quote it as given (`?limit=abc`), not as what coercion made of it.
  const given = where === 'query' ? valueAt(value, problem.path) : undefined;
  const quoted = typeof given === 'string' ? ` (got ${JSON.stringify(given)})` : '';
  throw new CallgateError('request-invalid', `${path}: ${problem.message}${quoted}`, { path });
}

/** The value at `path` under `root`, or undefined. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** The digits of a number `parseJsonLossless` kept as sent (a lossless-json number), else undefined. */
export function keptDigits(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const kept = value as { isLosslessNumber?: unknown; value?: unknown };
  return kept.isLosslessNumber === true && typeof kept.value === 'string' ? kept.value : undefined;
}

/**
 * Refuses a query string that gives a parameter more than once (`?expect_size=1&expect_size=2`):
 * no parameter of the API is a list, and which of two values would count is a guess (one reader
 * takes the first, another the last). Names are compared as decoded (WHATWG URL
 * `application/x-www-form-urlencoded`), so `a=1&%61=2` repeats `a`.
 *
 * @param url the request's URL.
 * @throws CallgateError `request-invalid` (path `query.NAME`) naming the first repeated parameter
 *   and how many times it was given.
 */
export function refuseRepeatedQuery(url: string): void {
  const start = url.indexOf('?');
  if (start === -1) return;
  const times = new Map<string, number>();
  for (const [name] of new URLSearchParams(url.slice(start + 1).split('#', 1)[0]))
    times.set(name, (times.get(name) ?? 0) + 1);
  for (const [name, given] of times) {
    if (given < 2) continue;
    const path = formatPath([name], 'query');
    throw new CallgateError('request-invalid', `${path}: given ${given} times; give it once`, { path });
  }
}
