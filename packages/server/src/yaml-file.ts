// YAML text parsed with its positions kept, so that a config error can say at which line and
// column the offending value stands (the same walk as core's policy YAML locator).
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';

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

type YamlNode = ReturnType<Document['getIn']>;

const rangeStart = (node: unknown): number | undefined =>
  (node as { range?: [number, number, number] } | null | undefined)?.range?.[0];

/**
 * Parses one YAML document (YAML 1.2 core schema; duplicate keys refused), as `yaml`'s `parse`
 * does, keeping its nodes' positions. Warnings are not printed.
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
  const position = (offset: number): YamlPosition => {
    const { line, col } = lineCounter.linePos(offset);
    return line === 0 ? { line: 1, column: offset + 1 } : { line, column: col };
  };
  return {
    value,
    positionOf(path, at = 'value') {
      let node: YamlNode = document.contents;
      let offset = rangeStart(node);
      for (let index = 0; index < path.length; index++) {
        const segment = path[index];
        if (isAlias(node)) node = node.resolve(document);
        let next: YamlNode;
        let keyOffset: number | undefined;
        if (isMap(node)) {
          const pair = node.items.find(
            (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
          );
          if (!pair) break;
          keyOffset = rangeStart(pair.key);
          next = pair.value as YamlNode;
        } else if (isSeq(node) && typeof segment === 'number') {
          next = node.items[segment] as YamlNode;
        } else {
          break;
        }
        if (index === path.length - 1 && at === 'key' && keyOffset !== undefined) {
          offset = keyOffset;
          break;
        }
        const nextOffset = rangeStart(next) ?? keyOffset;
        if (nextOffset === undefined) break;
        node = next;
        offset = nextOffset;
      }
      return offset === undefined ? undefined : position(offset);
    },
  };
}
