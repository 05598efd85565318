// Reads policy YAML: parses one document (YAML 1.2 core schema, duplicate keys refused, any
// error or warning refused), and maps document paths back to line:column for messages.
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import {
  type Path,
  type PolicySource,
  type Position,
  policyInvalid,
  type SourceLocator,
} from './problems.js';

/** A parsed policy text: its plain value and a locator over its source. */
export interface ParsedYaml {
  readonly value: unknown;
  readonly locator: SourceLocator;
}

/**
 * Parses `text` as one YAML document.
 *
 * @throws CallgateError `policy-invalid` for a syntax error, a duplicate key, several documents,
 *   an unknown tag or an unresolved alias, naming `name` and the line:column.
 */
export function parsePolicyYaml(text: string, name: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const locator = new YamlLocator(document, lineCounter, text);
  const source: PolicySource = { name, locator };
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) {
    throw policyInvalid(source, [], `YAML: ${problem.message}`, {
      position: locator.position(problem.pos[0]),
    });
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw policyInvalid(source, [], `YAML: ${(error as Error).message}`, {}, error);
  }
  return { value, locator };
}

type YamlNode = ReturnType<Document['getIn']>;

class YamlLocator implements SourceLocator {
  constructor(
    private readonly document: Document,
    private readonly lineCounter: LineCounter,
    private readonly text: string,
  ) {}

  position(offset: number): Position {
    const { line, col } = this.lineCounter.linePos(offset);
    return line === 0 ? { line: 1, column: offset + 1 } : { line, column: col };
  }

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
