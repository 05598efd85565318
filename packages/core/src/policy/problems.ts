// How a policy that fails to load is reported: one CallgateError of kind `policy-invalid` whose
// message reads like a compiler's, `<source>:<line>:<column>: rule "<id>": <path>: <what>`, and
// whose details carry the same facts for programs.
import { CallgateError, formatPath } from '@callgate/protocol';

/** A step into a document: an object key or an array index. */
export type PathSegment = string | number;
/** Where a value sits in the document, from the root. */
export type Path = readonly PathSegment[];

/** A 1-based line and column in the policy's source text. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Maps document paths back to positions in the source text (YAML only). */
export interface SourceLocator {
  /** The position of the key (`at: 'key'`) or the value at `path`, or of its nearest ancestor. */
  locate(path: Path, at: 'key' | 'value'): Position | undefined;
  /** The position of character `offset` of the string at `path`, or of the string's start. */
  locateInString(path: Path, offset: number): Position | undefined;
  /**
   * The source text of the number at `path` as written (`0x10` for a value read as 16), or
   * undefined when there is none (not a number, or no text behind the document).
   */
  numberSource?(path: Path): string | undefined;
}

/** What a loading policy is called in messages, and how to find positions in it. */
export interface PolicySource {
  readonly name: string;
  readonly locator?: SourceLocator;
  /**
   * Where the policy sits in the file `name` (`['policy']` for callgate.yaml's inline policy):
   * messages and `details.path` name fields from the file's root (`policy.limits.run.max_calls`).
   */
  readonly within?: Path;
}

/** Where a problem is and what it concerns. */
export interface ProblemPlace {
  /** The id of the rule the problem is inside, when known. */
  readonly rule?: string;
  /** Point at the key instead of the value (unknown keys). */
  readonly at?: 'key' | 'value';
  /** An exact position, when the caller computed one (a CEL error inside `when`). */
  readonly position?: Position;
}

/**
 * The error for a policy that cannot load: kind `policy-invalid`, a message naming the source,
 * the line:column (when the source is YAML), the rule id (when inside a rule) and the path, and
 * details `{ path?, rule?, line?, column? }`.
 */
export function policyInvalid(
  source: PolicySource,
  path: Path,
  message: string,
  place: ProblemPlace = {},
  cause?: unknown,
): CallgateError {
  const position = place.position ?? source.locator?.locate(path, place.at ?? 'value');
  const pathText = formatPath([...(source.within ?? []), ...path]);
  let text = position ? `${source.name}:${position.line}:${position.column}: ` : `${source.name}: `;
  if (place.rule !== undefined) text += `rule ${JSON.stringify(place.rule)}: `;
  if (pathText !== '') text += `${pathText}: `;
  text += message;
  const details: Record<string, unknown> = {};
  if (pathText !== '') details.path = pathText;
  if (place.rule !== undefined) details.rule = place.rule;
  if (position) {
    details.line = position.line;
    details.column = position.column;
  }
  return new CallgateError('policy-invalid', text, details, cause === undefined ? undefined : { cause });
}

/**
 * Up to one suggestion for a misspelt key: a candidate that starts with the key (`destructive` for
 * `destructiveHint`), else the closest of `candidates` within two edits.
 */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  if (lower.length >= 3) {
    const extended = candidates.find((candidate) => candidate.toLowerCase().startsWith(lower));
    if (extended) return extended;
  }
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = (previous[column - 1] ?? 0) + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min((previous[column] ?? 0) + 1, (current[column - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}
