// Where a value of a YAML text stands: document paths mapped back to 1-based line and column,
// for every message about a YAML file (policies, callgate.yaml, tool lists). One locator for all.
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, type LineCounter } from 'yaml';
import type { Path, Position, SourceLocator } from './problems.js';

type YamlNode = ReturnType<Document['getIn']>;

/**
 * Maps paths of a parsed YAML document (`yaml`'s `parseDocument` with a `LineCounter`) back to
 * positions in its text. A path that goes where the text does not (a missing field) is located
 * at its nearest ancestor.
 */
export class YamlLocator implements SourceLocator {
  constructor(
    private readonly document: Document,
    private readonly lineCounter: LineCounter,
    private readonly text: string,
  ) {}

  position(offset: number): Position {
    const { line, col } = this.lineCounter.linePos(offset);
    return line === 0 ? { line: 1, column: offset + 1 } : { line, column: col };
  }

  /** The position of the value at `path` (or, `at: 'key'`, of the key that holds it). */
  locate(path: Path, at: 'key' | 'value'): Position | undefined {
    const offset = this.find(path, at)?.offset;
    return offset === undefined ? undefined : this.position(offset);
  }

  locateInString(path: Path, offset: number): Position | undefined {
    const found = this.find(path, 'value');
    if (!found) return undefined;
    const node = found.node;
    if (found.exact && isScalar(node) && typeof node.value === 'string' && node.range) {
      const [start, end] = node.range;
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      const body = quoted ? this.text.slice(start + 1, end - 1) : this.text.slice(start, end);
      // Only when the source spells the string character for character (no escapes, no folded
      // lines) does an offset into the string map to a column.
      if ((quoted || node.type === 'PLAIN') && body === node.value && !body.includes('\n')) {
        return this.position(start + (quoted ? 1 : 0) + Math.min(offset, body.length));
      }
    }
    return this.position(found.offset);
  }

  /**
   * The source text of the number scalar at exactly `path` (`0x10`, `+5`, `7.0`, `010`), or
   * undefined when the value there is not a plain number scalar (text, a mapping, missing).
   * The YAML reader turns `0x10` into 16 before callgate sees it; a field that takes decimal
   * digits only holds the source to them.
   */
  numberSource(path: Path): string | undefined {
    const found = this.find(path, 'value');
    if (!found?.exact) return undefined;
    const node = isAlias(found.node) ? found.node.resolve(this.document) : found.node;
    if (!isScalar(node) || (typeof node.value !== 'number' && typeof node.value !== 'bigint'))
      return undefined;
    const source = (node as { source?: unknown }).source;
    return typeof source === 'string' ? source : String(node.value);
  }

  /** This locator for the part of the document under `prefix` (an inline policy's `policy:`). */
  within(prefix: Path): SourceLocator {
    return {
      locate: (path, at) => this.locate([...prefix, ...path], at),
      locateInString: (path, offset) => this.locateInString([...prefix, ...path], offset),
      numberSource: (path) => this.numberSource([...prefix, ...path]),
    };
  }

  /** The node at `path` (or its nearest ancestor, `exact: false`) and the offset to report. */
  private find(
    path: Path,
    at: 'key' | 'value',
  ): { node: unknown; offset: number; exact: boolean } | undefined {
    let node: YamlNode = this.document.contents;
    let offset = rangeStart(node) ?? 0;
    for (let index = 0; index < path.length; index++) {
      const segment = path[index];
      if (isAlias(node)) node = node.resolve(this.document);
      let next: YamlNode;
      let keyOffset: number | undefined;
      if (isMap(node)) {
        const pair = node.items.find(
          (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
        );
        if (!pair) return { node, offset, exact: false };
        keyOffset = rangeStart(pair.key);
        next = pair.value as YamlNode;
      } else if (isSeq(node) && typeof segment === 'number') {
        next = node.items[segment] as YamlNode;
      } else {
        return { node, offset, exact: false };
      }
      const last = index === path.length - 1;
      if (last && at === 'key' && keyOffset !== undefined)
        return { node: next, offset: keyOffset, exact: true };
      const nextOffset = rangeStart(next) ?? keyOffset;
      if (nextOffset === undefined) return { node, offset, exact: false };
      node = next;
      offset = nextOffset;
    }
    return { node, offset, exact: true };
  }
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range?.[0];
}
