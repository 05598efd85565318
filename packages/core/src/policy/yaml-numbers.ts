// Numbers of a YAML document judged as written: `toJS` reads a number scalar through a double, so
// `1000.00000000000001` would silently become 1000. Each number scalar's source text is checked
// with the gate's own number rule (see json/yaml-number.ts) before the document is used.
import { type Document, isMap, isPair, isScalar, isSeq, type Node } from 'yaml';
import { yamlNumberProblem } from '../json/yaml-number.js';

/** A number scalar of a YAML document that a double does not hold. */
export interface InexactYamlNumber {
  /** Keys and indexes from the document's root to the number (a key's own path, for a key). */
  readonly path: readonly (string | number)[];
  /** The scalar as written. */
  readonly source: string;
  /** Offset of the scalar in the YAML text (UTF-16 code units). */
  readonly offset: number;
  /** Why it is refused, quoting `source`. */
  readonly problem: string;
}

/** The text of a plain scalar the document resolved as a number, else undefined. */
function numberSource(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  if (typeof node.value !== 'number' && typeof node.value !== 'bigint') return undefined;
  const source = (node as { source?: unknown }).source;
  return typeof source === 'string' ? source : String(node.value);
}

/**
 * The first number scalar of `document` (keys included, in document order) that a double does not
 * hold exactly, or undefined. Aliases are not followed: their anchored node is checked where it
 * stands.
 */
export function firstInexactNumber(document: Document.Parsed | Document): InexactYamlNumber | undefined {
  const visit = (node: unknown, path: (string | number)[], depth: number): InexactYamlNumber | undefined => {
    if (depth > 512) return undefined;
    const source = numberSource(node);
    if (source !== undefined) {
      const problem = yamlNumberProblem(source);
      if (problem === undefined) return undefined;
      return { path, source, offset: (node as Node).range?.[0] ?? 0, problem };
    }
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const atKey = visit(pair.key, [...path, key], depth + 1);
        if (atKey) return atKey;
        const atValue = visit(pair.value, [...path, key], depth + 1);
        if (atValue) return atValue;
      }
    } else if (isSeq(node)) {
      for (let index = 0; index < node.items.length; index++) {
        const found = visit(node.items[index], [...path, index], depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return visit(document.contents, [], 0);
}
