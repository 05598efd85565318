import { CallgateError } from '@callgate/protocol';

/** A named pattern that refuses a call when an argument string matches it. */
export interface GuardrailPattern {
  name: string;
  pattern: RegExp;
  /** Tool names the pattern applies to; every tool when absent. */
  tools?: string[];
}

/** Guardrail settings of an engine. */
export interface GuardrailOptions {
  /** Refuse arguments that look like credentials (keys, tokens, private keys). Default true. */
  secrets?: boolean;
  /** Extra patterns refused in argument strings. */
  patterns?: GuardrailPattern[];
  /** Longest accepted single string argument, in characters. Default: no limit beyond the size limit. */
  maxStringLength?: number;
}

/** Credential shapes refused by default: a value like these should never travel in a tool call. */
export const SECRET_PATTERNS: GuardrailPattern[] = [
  { name: 'private key', pattern: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/ },
  { name: 'AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/ },
  { name: 'Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { name: 'OpenAI-style API key', pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}\b/ },
  { name: 'JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
];

function* strings(value: unknown, path: string, depth = 0): Generator<[string, string]> {
  if (depth > 64) return;
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* strings(item, `${path}[${index}]`, depth + 1);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) yield* strings(item, `${path}.${key}`, depth + 1);
  }
}

/** Compiled guardrails: checks a call's arguments before it is decided. */
export class Guardrails {
  readonly #patterns: GuardrailPattern[];
  readonly #maxStringLength: number;

  constructor(options: GuardrailOptions = {}) {
    this.#patterns = [...(options.secrets === false ? [] : SECRET_PATTERNS), ...(options.patterns ?? [])];
    this.#maxStringLength = options.maxStringLength ?? Number.POSITIVE_INFINITY;
  }

  /**
   * @throws CallgateError `guardrail-blocked` naming the argument path and the guardrail (never
   *   the matched value itself).
   */
  check(tool: string, args: Record<string, unknown>): void {
    if (this.#patterns.length === 0 && this.#maxStringLength === Number.POSITIVE_INFINITY) return;
    for (const [path, value] of strings(args, 'arguments')) {
      if (value.length > this.#maxStringLength) {
        throw new CallgateError(
          'guardrail-blocked',
          `${path} is ${value.length} characters, over the guardrail limit of ${this.#maxStringLength}`,
          { path },
        );
      }
      for (const guard of this.#patterns) {
        if (guard.tools && !guard.tools.includes(tool)) continue;
        guard.pattern.lastIndex = 0;
        if (guard.pattern.test(value)) {
          throw new CallgateError(
            'guardrail-blocked',
            `${path} looks like a ${guard.name}; it is not sent to ${tool}`,
            {
              path,
              guardrail: guard.name,
            },
          );
        }
      }
    }
  }
}

/** The value at a dotted path (`invoice.id`, `items.0.sku`) of `args`, or undefined. */
export function valueAtPath(args: Record<string, unknown>, path: string): unknown {
  let current: unknown = args;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
