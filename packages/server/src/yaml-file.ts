// YAML text parsed with its positions kept, so that a config error can say at which line and
// column the offending value stands.
import { firstInexactNumber, YamlLocator } from '@callgate/core';
import { LineCounter, parseDocument } from 'yaml';

/** A 1-based line and column in a YAML text. */
export interface YamlPosition {
  line: number;
  column: number;
}

/** A parsed YAML document: its plain value, and where the values of the value came from. */
export interface YamlText {
  readonly value: unknown;
  /**
   * The position of the value at `path` (or, `at: 'key'`, of the key that holds it), or of its
   * nearest ancestor in the text when the path goes where the text does not (a missing field).
   * Undefined when not even the root has a position (an empty text).
   */
  positionOf(path: readonly PropertyKey[], at?: 'key' | 'value'): YamlPosition | undefined;
  /**
   * The number at exactly `path` as the text wrote it (`0x10`, `+5`, `7.0` where the value reads
   * 16, 5, 7), or undefined when no number scalar stands there.
   */
  numberSource(path: readonly (string | number)[]): string | undefined;
  /** Where values under `prefix` stand, for core's policy compiler (an inline `policy:`). */
  locatorWithin(prefix: readonly (string | number)[]): ReturnType<YamlLocator['within']>;
}

/** A number of a YAML text that a double does not hold: its message names where and quotes it. */
export class YamlNumberError extends Error {
  constructor(
    message: string,
    /** Keys and indexes from the root to the number. */
    readonly path: readonly (string | number)[],
    /** Where the number stands, 1-based. */
    readonly position: YamlPosition,
    /** What is wrong with it, without the place: `the number 1e400 …`. */
    readonly problem: string,
  ) {
    super(message);
  }
}

/**
 * Parses one YAML document (YAML 1.2 core schema; duplicate keys refused), as `yaml`'s `parse`
 * does, keeping its nodes' positions (core's `YamlLocator`, the one policies use). Warnings are
 * not printed.
 *
 * @throws the `yaml` package's `YAMLParseError` (its message gives the line and column) for a
 *   syntax error, a duplicate key or several documents; {@link YamlNumberError} for a number a
 *   double (IEEE 754 binary64) does not hold exactly (`1e400`, `12345678901234567890`, `.inf`),
 *   `line L, column C: PATH: why`, quoting the digits as written.
 */
export function parseYamlText(text: string): YamlText {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const problem = document.errors[0];
  if (problem) throw problem;
  const inexact = firstInexactNumber(document);
  if (inexact) {
    const { line, col } = lineCounter.linePos(inexact.offset);
    const where = inexact.path.map((segment) =>
      typeof segment === 'number' ? `[${segment}]` : `.${segment}`,
    );
    throw new YamlNumberError(
      `line ${line}, column ${col}: ${where.join('').replace(/^\./, '')}: ${inexact.problem}`,
      inexact.path,
      { line, column: col },
      inexact.problem,
    );
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  const locator = new YamlLocator(document, lineCounter, text);
  return {
    value,
    positionOf(path, at = 'value') {
      if (document.contents === null) return undefined;
      return locator.locate(
        path.map((segment) => (typeof segment === 'number' ? segment : String(segment))),
        at,
      );
    },
    numberSource: (path) => locator.numberSource(path),
    locatorWithin: (prefix) => locator.within(prefix),
  };
}
