// YAML text parsed with its positions kept, so that a config error can say at which line and
// column the offending value stands.
import { YamlLocator } from '@callgate/core';
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
}

/**
 * Parses one YAML document (YAML 1.2 core schema; duplicate keys refused), as `yaml`'s `parse`
 * does, keeping its nodes' positions (core's `YamlLocator`, the one policies use). Warnings are
 * not printed.
 *
 * @throws the `yaml` package's `YAMLParseError` (its message gives the line and column) for a
 *   syntax error, a duplicate key or several documents.
 */
export function parseYamlText(text: string): YamlText {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const problem = document.errors[0];
  if (problem) throw problem;
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
  };
}
