// The shape half of the record-line reader (`record-line-reader.ts`): whether a value, already
// read as canonical JSON from a line's bytes, fits a node of the compiled record schemas
// (`record-line-shape.ts`). Values are given by kind and byte span; nothing is parsed or made.

import { HEX_RUN, keyIdOf, numberEnd, outNumber, stringEnd, valueEnd } from './record-line-scan.js';
import {
  ANY,
  ARRAY,
  BOOLEAN,
  DIGEST,
  ENUM,
  NULLABLE,
  NUMBER,
  NUMBER_LITERAL,
  OBJECT,
  OPTIONAL,
  RECORD,
  type ShapeNode,
  STRING,
} from './record-line-shape.js';

// Value kinds of a field.
export const K_STRING = 1;
export const K_NUMBER = 2;
export const K_TRUE = 3;
export const K_FALSE = 4;
export const K_NULL = 5;
export const K_OBJECT = 6;
export const K_ARRAY = 7;

/** Index of the enum value `bytes[start, stop)` is, or -1. */
export function enumIndex(
  bytes: Uint8Array,
  start: number,
  stop: number,
  values: readonly Uint8Array[],
): number {
  const length = stop - start;
  for (let v = 0; v < values.length; v++) {
    const value = values[v] as Uint8Array;
    if (value.length !== length) continue;
    let i = 0;
    while (i < length && bytes[start + i] === value[i]) i += 1;
    if (i === length) return v;
  }
  return -1;
}

function numberFits(node: ShapeNode, value: number): boolean {
  if (node.integer && !Number.isSafeInteger(value)) return false;
  if (node.minimumInclusive ? value < node.minimum : value <= node.minimum) return false;
  return node.maximumInclusive ? value <= node.maximum : value < node.maximum;
}

/**
 * Whether the scalar of kind `kind` at `bytes[start, stop)` (a string with its quotes) fits `node`;
 * `escaped`: the string has an escape; `hexRun`: how many lowercase hex digits end it.
 */
export function scalarFits(
  bytes: Uint8Array,
  node: ShapeNode,
  kind: number,
  start: number,
  stop: number,
  value: number,
  escaped: number,
  hexRun: number,
): boolean {
  switch (node.kind) {
    case STRING:
      return kind === K_STRING;
    case DIGEST: {
      const prefix = node.prefix;
      if (kind !== K_STRING || escaped === 1 || hexRun < 64 || stop - start - 2 !== prefix.length + 64)
        return false;
      for (let i = 0; i < prefix.length; i++) if (bytes[start + 1 + i] !== prefix[i]) return false;
      return true;
    }
    case NUMBER:
      return kind === K_NUMBER && numberFits(node, value);
    case BOOLEAN:
      return kind === K_TRUE || kind === K_FALSE;
    case NUMBER_LITERAL:
      return kind === K_NUMBER && value === node.value;
    case ENUM:
      return kind === K_STRING && escaped === 0 && enumIndex(bytes, start + 1, stop - 1, node.values) >= 0;
    case NULLABLE:
      return (
        kind === K_NULL ||
        scalarFits(bytes, node.inner as ShapeNode, kind, start, stop, value, escaped, hexRun)
      );
    case OPTIONAL:
      return scalarFits(bytes, node.inner as ShapeNode, kind, start, stop, value, escaped, hexRun);
    case ANY:
      return true;
    default:
      return false;
  }
}

/** The end of the value at `at` (its canonical form already checked) when it fits `node`, else -1. */
export function fits(bytes: Uint8Array, end: number, node: ShapeNode, at: number): number {
  const code = bytes[at];
  const kind = node.kind;
  if (kind === NULLABLE) return code === 110 ? at + 4 : fits(bytes, end, node.inner as ShapeNode, at);
  if (kind === OPTIONAL) return fits(bytes, end, node.inner as ShapeNode, at);
  if (kind === ANY) return valueEnd(bytes, at, end, 0);
  if (kind === ARRAY) {
    if (code !== 91) return -1;
    let i = at + 1;
    if (bytes[i] === 93) return i + 1;
    for (;;) {
      i = fits(bytes, end, node.inner as ShapeNode, i);
      if (i < 0) return -1;
      if (bytes[i] === 93) return i + 1;
      i += 1;
    }
  }
  if (kind === RECORD || kind === OBJECT) return objectFits(bytes, end, node, at);
  let valueKind = K_NUMBER;
  let stop: number;
  if (code === 34) {
    valueKind = K_STRING;
    stop = stringEnd(bytes, at, end);
  } else if (code === 116) {
    valueKind = K_TRUE;
    stop = at + 4;
  } else if (code === 102) {
    valueKind = K_FALSE;
    stop = at + 5;
  } else if (code === 110) {
    valueKind = K_NULL;
    stop = at + 4;
  } else if (code === 123 || code === 91) return -1;
  else stop = numberEnd(bytes, at, end);
  if (stop < 0) return -1;
  const ok = scalarFits(
    bytes,
    node,
    valueKind,
    at,
    stop,
    outNumber[0] as number,
    HEX_RUN[0] as number,
    HEX_RUN[1] as number,
  );
  return ok ? stop : -1;
}

/** `fits` for an object or a string record at `at`. */
function objectFits(bytes: Uint8Array, end: number, node: ShapeNode, at: number): number {
  if (bytes[at] !== 123) return -1;
  let i = at + 1;
  if (bytes[i] === 125) return node.kind === RECORD || node.requiredCount === 0 ? i + 1 : -1;
  let required = 0;
  for (;;) {
    const keyStop = stringEnd(bytes, i, end);
    if (keyStop < 0) return -1;
    if (node.kind === RECORD) i = fits(bytes, end, node.inner as ShapeNode, keyStop + 1);
    else {
      const id = keyIdOf(bytes, i + 1, keyStop - 1);
      const field = id < 0 ? undefined : node.fields.find((candidate) => candidate.id === id);
      if (field === undefined) {
        if (node.strict) return -1;
        i = valueEnd(bytes, keyStop + 1, end, 0);
      } else {
        if (field.required) required += 1;
        i = fits(bytes, end, field.node, keyStop + 1);
      }
    }
    if (i < 0) return -1;
    if (bytes[i] === 125) return node.kind === OBJECT && required !== node.requiredCount ? -1 : i + 1;
    i += 1;
  }
}
