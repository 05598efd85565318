// Prototype measurement: a record-line reader that builds no record object, against what the
// verifier does today for each record line of a bundle file read from its bytes.
//   (i)  today: the line's latin1 text, JSON.parse + canonical check (`parseRecordLine`, with its
//        one-pass `isCertainlyCanonical` scan) + shape check (`isLedgerRecord`, compiled from zod);
//   (ii) this prototype reader: one pass over the line's bytes checking strict canonical JSON (RFC 8785: no
//        whitespace, keys strictly increasing, ECMAScript number forms, minimal escapes; ASCII
//        only, anything else answered "not sure"), recording each top-level field's span, then
//        the record type's shape (compiled from the same zod schema), then handing over the few
//        fields the later checks compare (run id, seq, run seq, ts, prev, type, call id, attempt,
//        tool, digests) as strings and numbers. Nested values (labels, rules, tool_calls) stay
//        byte spans, walked only to check their shape.
// (iii) the reader as built into the verifier (packages/core dist, `readRecordLine`, which also
// hands over commitments, ids and enums as the record checks read them).
// All run over the same lines, interleaved, several rounds; µs per line, the ratio and the load
// average are printed. A line the reader is not sure of would go to (i); the count is printed.
//
// Usage: node bench/record-reader.mjs FILE [--rounds 7] [--stop-after scan|shape]
//   FILE: a bundle file in the one-record-a-line layout, e.g. DIR/v2-plain.json after
//   `node bench/verify.mjs --records 100000 --rounds 1 --write DIR`.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ledgerRecordSchema, ledgerRecordV2Schema } from '@callgate/protocol';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(pathToFileURL(resolve(root, 'packages/core/dist', path)).href);
const { parseRecordLine } = await dist('ledger/bundle-text.js');
const { isLedgerRecord } = await dist('ledger/record-validator.js');
/** The reader as integrated in the verifier (packages/core/src/ledger/record-line-reader.ts). */
const { readRecordLine: builtReader } = await dist('ledger/record-line-reader.js');

// ---------------------------------------------------------------------------------------------
// Shape: the zod schema compiled to plain nodes the byte reader checks.
const STR = 1;
const DIGEST = 2;
const NUM = 3;
const BOOL = 4;
const LIT = 5;
const ENUM = 6;
const NULLABLE = 7;
const OPTIONAL = 8;
const ARR = 9;
const REC = 10;
const OBJ = 11;
const ANY = 12;

/** Every node has the same fields in the same order (one hidden class: monomorphic reads). */
function N(k, extra = {}) {
  const node = {
    k,
    prefix: null,
    int: false,
    min: -Infinity,
    minIn: true,
    max: Infinity,
    maxIn: true,
    value: null,
    values: null,
    inner: null,
    element: null,
    fields: null,
    strict: false,
    requiredCount: 0,
  };
  return Object.assign(node, extra);
}
const ascii = (text) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const defOf = (schema) => schema._zod.def;

/** Every key name any object of the schema has, sorted by UTF-16 code units (= bytes, ASCII). */
const keyNames = new Set();

function compileNode(schema) {
  const def = defOf(schema);
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'string': {
      if (checks.length === 0) return N(STR);
      const pattern = checks.length === 1 ? checks[0]._zod.def.pattern : undefined;
      const match = pattern && /^\^([a-z0-9-]+):\[0-9a-f\]\{64\}\$$/.exec(pattern.source);
      if (!match) return undefined;
      return N(DIGEST, { prefix: ascii(`${match[1]}:`) });
    }
    case 'number': {
      const node = N(NUM);
      for (const check of checks) {
        const c = check._zod.def;
        if (c.check === 'number_format' && c.format === 'safeint') node.int = true;
        else if (c.check === 'greater_than') [node.min, node.minIn] = [c.value, c.inclusive === true];
        else if (c.check === 'less_than') [node.max, node.maxIn] = [c.value, c.inclusive === true];
        else return undefined;
      }
      return node;
    }
    case 'boolean':
      return N(BOOL);
    case 'literal': {
      const values = def.values;
      if (values.length !== 1) return undefined;
      const value = values[0];
      if (typeof value === 'string') return N(ENUM, { values: [ascii(value)] });
      if (typeof value === 'number') return N(LIT, { value });
      return undefined;
    }
    case 'enum': {
      const values = Object.values(def.entries);
      if (!values.every((v) => typeof v === 'string')) return undefined;
      return N(ENUM, { values: values.map(ascii) });
    }
    case 'nullable':
    case 'optional': {
      const inner = compileNode(def.innerType);
      return inner && N(def.type === 'nullable' ? NULLABLE : OPTIONAL, { inner });
    }
    case 'array': {
      const element = checks.length === 0 ? compileNode(def.element) : undefined;
      return element && N(ARR, { element });
    }
    case 'record': {
      const value = compileNode(def.valueType);
      if (defOf(def.keyType).type !== 'string' || (defOf(def.keyType).checks ?? []).length > 0)
        return undefined;
      return value && N(REC, { inner: value });
    }
    case 'object': {
      const catchall = def.catchall === undefined ? undefined : defOf(def.catchall).type;
      if (catchall !== undefined && catchall !== 'never') return undefined;
      const fields = [];
      for (const [name, field] of Object.entries(def.shape)) {
        const node = compileNode(field);
        if (node === undefined) return undefined;
        keyNames.add(name);
        fields.push({ name, node, required: field._zod.optin !== 'optional' });
      }
      return N(OBJ, { strict: catchall === 'never', fields });
    }
    case 'unknown':
    case 'any':
      return N(ANY);
    default:
      return undefined;
  }
}

/** Per record version: a map from the type's bytes (latin1 text) to its compiled object node. */
function compileUnion(schema) {
  const byType = new Map();
  for (const option of defOf(schema).options) {
    const node = compileNode(option);
    const type = defOf(defOf(option).shape.type).values[0];
    if (node !== undefined) byType.set(type, node);
  }
  return byType;
}
const typesV1 = compileUnion(ledgerRecordSchema);
const typesV2 = compileUnion(ledgerRecordV2Schema);

// Key ids: index in the sorted list of every key name.
const KEYS = [...keyNames].sort();
const KEY_BYTES = KEYS.map(ascii);
const KEY_ID = new Map(KEYS.map((name, id) => [name, id]));
for (const types of [typesV1, typesV2])
  for (const node of types.values()) {
    for (const field of node.fields) field.id = KEY_ID.get(field.name);
    node.present = node.fields.length;
  }
const nestedObjects = [];
for (const types of [typesV1, typesV2])
  for (const node of types.values()) for (const field of node.fields) markNested(field.node);
function markNested(node) {
  if (node.k === OBJ) {
    nestedObjects.push(node);
    for (const field of node.fields) {
      field.id = KEY_ID.get(field.name);
      markNested(field.node);
    }
  } else if (node.k === NULLABLE || node.k === OPTIONAL) markNested(node.inner);
  else if (node.k === ARR) markNested(node.element);
  else if (node.k === REC) markNested(node.inner);
}

// ---------------------------------------------------------------------------------------------
// The byte reader. Every function takes the bytes `b` and the line's end `end` as arguments (no
// module variable in the byte loops); side results go to the typed arrays `out` and `outNumber`.
/** `--stop-after scan` or `shape`: time the reader's first stages alone (no agreement check). */
const stopAt = process.argv.indexOf('--stop-after');
const MODE = stopAt > 0 ? { scan: 1, shape: 2 }[process.argv[stopAt + 1]] : 0;
const QUOTE = 34;
const BACKSLASH = 92;
/** Per byte: 1 when it may stand unescaped in a string (0x20–0x7e but `"` and `\`). */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 0x7f; c++) PLAIN[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;
/** Per byte: -1 (all ones) for a lowercase hex digit, else 0: `run = (run + 1) & HEX_MASK[c]`. */
const HEX_MASK = new Int32Array(256);
for (const c of '0123456789abcdef') HEX_MASK[c.charCodeAt(0)] = -1;
/** Escape letters JSON.stringify writes after a backslash. */
const SHORT = new Uint8Array(256);
for (const c of '"\\bfnrt') SHORT[c.charCodeAt(0)] = 1;

// Value kinds of a top-level field.
const K_STRING = 1;
const K_NUMBER = 2;
const K_TRUE = 3;
const K_FALSE = 4;
const K_NULL = 5;
const K_OBJECT = 6;
const K_ARRAY = 7;

// The top-level fields of the line being read, by key id; `stamp` says which are this line's.
const fieldCount = KEYS.length;
const stamp = new Int32Array(fieldCount);
const kindOf = new Uint8Array(fieldCount);
const startOf = new Int32Array(fieldCount);
const endOf = new Int32Array(fieldCount);
const numberOf = new Float64Array(fieldCount);
const escapedOf = new Uint8Array(fieldCount);
const hexRunOf = new Int32Array(fieldCount);
/** The key id most often after each key id (learned), for the one-compare key match. */
const successor = new Int32Array(fieldCount + 1).fill(0);
/** out[0]: the last string had an escape; out[1]: its trailing run of hex digits. */
const out = new Int32Array(2);
/** outNumber[0]: the last number's value. */
const outNumber = new Float64Array(1);
const MAX_DEPTH = 32;
const state = { generation: 0 };

/** The index after the string whose quote is at `at`, or -1 (not canonical, not ASCII, bad). */
function stringEnd(b, at, end) {
  let escaped = 0;
  let run = 0;
  let i = at + 1;
  for (;;) {
    const c = b[i];
    if (PLAIN[c] === 1) {
      run = (run + 1) & HEX_MASK[c];
      i += 1;
      continue;
    }
    if (c === QUOTE) break;
    if (c !== BACKSLASH || i >= end) return -1; // control byte, not ASCII, or past the line
    escaped = 1;
    run = 0;
    const letter = b[i + 1];
    if (SHORT[letter] === 1) {
      i += 2;
      continue;
    }
    // \u00xx, lowercase, only for a control without a one-letter escape.
    if (letter !== 117 || b[i + 2] !== 48 || b[i + 3] !== 48) return -1;
    const high = b[i + 4];
    const low = b[i + 5];
    if (high !== 48 && high !== 49) return -1;
    if (HEX_MASK[low] === 0) return -1;
    const code = (high - 48) * 16 + (low <= 57 ? low - 48 : low - 87);
    if (code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return -1;
    i += 6;
  }
  if (i >= end) return -1;
  out[0] = escaped;
  out[1] = run;
  return i + 1;
}

/** The index after the canonical number at `at` (its value in outNumber[0]), or -1. */
function numberEnd(b, at, end) {
  let i = at;
  const negative = b[i] === 45;
  if (negative) i += 1;
  const first = b[i];
  if (!(first >= 48 && first <= 57)) return -1;
  let value = 0;
  let digits = 0;
  if (first === 48) {
    i += 1;
    const next = b[i];
    if (next >= 48 && next <= 57) return -1;
  } else {
    while (i < end) {
      const c = b[i];
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      digits += 1;
      i += 1;
    }
  }
  if (b[i] === 46 && i < end) {
    // A fraction: the same rules as canonical-line.ts, value by Number() (rare in records).
    const fraction = i + 1;
    i = fraction;
    while (i < end && b[i] >= 48 && b[i] <= 57) i += 1;
    if (i === fraction || b[i - 1] === 48) return -1;
    let significant = digits;
    if (first === 48) {
      let lead = fraction;
      while (lead < i && b[lead] === 48) lead += 1;
      if (lead - fraction > 5) return -1;
      significant = i - lead;
    } else significant += i - fraction;
    if (significant > 15) return -1;
    outNumber[0] = Number(b.latin1Slice(at, i));
  } else {
    if (first === 48 && negative) return -1;
    if (digits > 15) return -1;
    outNumber[0] = negative ? -value : value;
  }
  if (i >= end) return -1;
  const next = b[i];
  if (next !== 44 && next !== 125 && next !== 93) return -1;
  return i;
}

/** Whether b[aStart, aEnd) sorts before b[bStart, bEnd) (bytes = UTF-16 code units for ASCII). */
function before(b, aStart, aEnd, bStart, bEnd) {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let i = 0; i < length; i++) {
    const x = b[aStart + i];
    const y = b[bStart + i];
    if (x !== y) return x < y;
  }
  return aEnd - aStart < bEnd - bStart;
}

/** The end of the canonical value at `at` (any JSON value, nested), or -1. */
function valueEnd(b, at, end, depth) {
  const c = b[at];
  if (c === QUOTE) return stringEnd(b, at, end);
  if (c === 123) return objectEnd(b, at, end, depth + 1);
  if (c === 91) {
    if (depth + 1 >= MAX_DEPTH) return -1;
    let i = at + 1;
    if (b[i] === 93) return i + 1;
    for (;;) {
      i = valueEnd(b, i, end, depth + 1);
      if (i < 0 || i >= end) return -1;
      const next = b[i];
      if (next === 93) return i + 1;
      if (next !== 44) return -1;
      i += 1;
    }
  }
  if (at + 5 > end) return -1;
  if (c === 116) return b[at + 1] === 114 && b[at + 2] === 117 && b[at + 3] === 101 ? at + 4 : -1;
  if (c === 102)
    return b[at + 1] === 97 && b[at + 2] === 108 && b[at + 3] === 115 && b[at + 4] === 101 ? at + 5 : -1;
  if (c === 110) return b[at + 1] === 117 && b[at + 2] === 108 && b[at + 3] === 108 ? at + 4 : -1;
  return numberEnd(b, at, end);
}

/** The end of the canonical object at `at` (keys strictly increasing, unescaped), or -1. */
function objectEnd(b, at, end, depth) {
  if (depth >= MAX_DEPTH) return -1;
  let i = at + 1;
  if (b[i] === 125) return i + 1;
  let previousStart = -1;
  let previousEnd = -1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyStop = stringEnd(b, i, end);
    if (keyStop < 0 || out[0] === 1) return -1;
    if (previousStart >= 0 && !before(b, previousStart, previousEnd, i + 1, keyStop - 1)) return -1;
    previousStart = i + 1;
    previousEnd = keyStop - 1;
    if (b[keyStop] !== 58) return -1;
    i = valueEnd(b, keyStop + 1, end, depth);
    if (i < 0 || i >= end) return -1;
    const next = b[i];
    if (next === 125) return i + 1;
    if (next !== 44) return -1;
    i += 1;
  }
}

function bytesEqual(b, start, stop, expected) {
  if (stop - start !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (b[start + i] !== expected[i]) return false;
  return true;
}

/**
 * The id of the key whose opening quote is at `at`, greater than `after` (keys strictly
 * increase; KEYS is sorted), or -1 (unknown key, escaped, not sorted). Its end in out[1].
 */
function keyAt(b, at, end, after) {
  // Usually one compare: the key learned to come next.
  const guess = successor[after + 1];
  if (guess > after) {
    const key = KEY_BYTES[guess];
    const length = key.length;
    let i = 0;
    while (i < length && b[at + 1 + i] === key[i]) i += 1;
    if (i === length && b[at + 1 + length] === QUOTE) {
      out[1] = at + 2 + length;
      return guess;
    }
  }
  const keyStop = stringEnd(b, at, end);
  if (keyStop < 0 || out[0] === 1) return -1;
  for (let id = after + 1; id < fieldCount; id++) {
    if (bytesEqual(b, at + 1, keyStop - 1, KEY_BYTES[id])) {
      successor[after + 1] = id;
      out[1] = keyStop;
      return id;
    }
  }
  return -1;
}

/** Index of the enum value b[start, stop) is (unescaped), or -1. */
function enumIndex(b, start, stop, values) {
  for (let v = 0; v < values.length; v++) if (bytesEqual(b, start, stop, values[v])) return v;
  return -1;
}

function numberOk(node, value) {
  if (node.int && !Number.isSafeInteger(value)) return false;
  if (node.minIn ? value < node.min : value <= node.min) return false;
  if (node.maxIn ? value > node.max : value >= node.max) return false;
  return true;
}

/** Whether the scalar of kind `kind` at [start, stop) (string: quotes included) fits `node`. */
function scalarFits(b, node, kind, start, stop, number, escaped, hexRun) {
  switch (node.k) {
    case STR:
      return kind === K_STRING;
    case DIGEST: {
      if (kind !== K_STRING || escaped === 1 || hexRun < 64) return false;
      const prefix = node.prefix;
      if (stop - start - 2 !== prefix.length + 64) return false;
      for (let i = 0; i < prefix.length; i++) if (b[start + 1 + i] !== prefix[i]) return false;
      return true;
    }
    case NUM:
      return kind === K_NUMBER && numberOk(node, number);
    case BOOL:
      return kind === K_TRUE || kind === K_FALSE;
    case LIT:
      return kind === K_NUMBER && number === node.value;
    case ENUM:
      return kind === K_STRING && escaped === 0 && enumIndex(b, start + 1, stop - 1, node.values) >= 0;
    case NULLABLE:
      return kind === K_NULL || scalarFits(b, node.inner, kind, start, stop, number, escaped, hexRun);
    case OPTIONAL:
      return scalarFits(b, node.inner, kind, start, stop, number, escaped, hexRun);
    case ANY:
      return true;
    default:
      return false;
  }
}

/** The end of the (already canonical-checked) value at `at` when it fits `node`, else -1. */
function walk(b, end, node, at) {
  const c = b[at];
  if (node.k === NULLABLE) return c === 110 ? at + 4 : walk(b, end, node.inner, at);
  if (node.k === OPTIONAL) return walk(b, end, node.inner, at);
  if (node.k === ANY) return valueEnd(b, at, end, 0);
  if (node.k === ARR) {
    if (c !== 91) return -1;
    let i = at + 1;
    if (b[i] === 93) return i + 1;
    for (;;) {
      i = walk(b, end, node.element, i);
      if (i < 0) return -1;
      if (b[i] === 93) return i + 1;
      i += 1;
    }
  }
  if (node.k === REC || node.k === OBJ) {
    if (c !== 123) return -1;
    let i = at + 1;
    if (b[i] === 125) return node.k === REC || node.requiredCount === 0 ? i + 1 : -1;
    let seen = 0;
    for (;;) {
      const keyStop = stringEnd(b, i, end);
      if (node.k === REC) i = walk(b, end, node.inner, keyStop + 1);
      else {
        let field;
        for (let f = 0; f < node.fields.length; f++) {
          const candidate = node.fields[f];
          if (bytesEqual(b, i + 1, keyStop - 1, KEY_BYTES[candidate.id])) {
            field = candidate;
            break;
          }
        }
        if (field === undefined) {
          if (node.strict) return -1;
          i = valueEnd(b, keyStop + 1, end, 0);
        } else {
          seen += field.required ? 1 : 0;
          i = walk(b, end, field.node, keyStop + 1);
        }
      }
      if (i < 0) return -1;
      if (b[i] === 125) return node.k === OBJ && seen !== node.requiredCount ? -1 : i + 1;
      i += 1;
    }
  }
  // A scalar.
  let kind = K_NUMBER;
  let stop;
  if (c === QUOTE) {
    kind = K_STRING;
    stop = stringEnd(b, at, end);
  } else if (c === 116) {
    kind = K_TRUE;
    stop = at + 4;
  } else if (c === 102) {
    kind = K_FALSE;
    stop = at + 5;
  } else if (c === 110) {
    kind = K_NULL;
    stop = at + 4;
  } else if (c === 123 || c === 91) return -1;
  else stop = numberEnd(b, at, end);
  return scalarFits(b, node, kind, at, stop, outNumber[0], out[0], out[1]) ? stop : -1;
}
for (const node of nestedObjects) node.requiredCount = node.fields.filter((f) => f.required).length;

// What the reader hands the later checks: one reused object, fields as strings and numbers.
export const fields = {
  version: 0,
  type: '',
  seq: 0,
  runSeq: 0,
  ts: 0,
  runId: '',
  /** `prev`: its digest's text as the span [prevStart, prevStart + 71) of the bytes, or -1 for null. */
  prevStart: -1,
  callId: null,
  attempt: 0,
  tool: null,
  argumentsDigest: null,
  /** `policy_digest`: the start of its text in the bytes, or -1 when absent. */
  policyDigestStart: -1,
};
const id = (name) => KEY_ID.get(name);
const ID_V = id('v');
const ID_TYPE = id('type');
const ID_SEQ = id('seq');
const ID_RUN_SEQ = id('run_seq');
const ID_TS = id('ts');
const ID_RUN_ID = id('run_id');
const ID_PREV = id('prev');
const ID_CALL_ID = id('call_id');
const ID_ATTEMPT = id('attempt');
const ID_TOOL = id('tool');
const ID_ARGUMENTS_DIGEST = id('arguments_digest');
const ID_POLICY_DIGEST = id('policy_digest');

/** The last string made for a field whose value repeats (run id, tool): reused when the bytes match. */
const lastText = new Array(KEYS.length).fill('');
/** The text of string field `key` (null for null), or undefined when absent. */
function stringField(b, key, generation, reuse) {
  if (stamp[key] !== generation) return undefined;
  if (kindOf[key] === K_NULL) return null;
  const start = startOf[key];
  const stop = endOf[key];
  if (escapedOf[key] === 1) return JSON.parse(b.latin1Slice(start, stop));
  if (reuse) {
    const last = lastText[key];
    if (last.length === stop - start - 2) {
      let i = 0;
      while (i < last.length && last.charCodeAt(i) === b[start + 1 + i]) i += 1;
      if (i === last.length) return last;
    }
    const text = b.latin1Slice(start + 1, stop - 1);
    lastText[key] = text;
    return text;
  }
  return b.latin1Slice(start + 1, stop - 1);
}

const typeBytes = [...typesV2.keys()].map((name) => [name, ascii(name)]);
/** The record type's name for its bytes, one string per type (no new string per line). */
function typeName(b, start, stop) {
  for (let t = 0; t < typeBytes.length; t++)
    if (bytesEqual(b, start, stop, typeBytes[t][1])) return typeBytes[t][0];
  return '';
}

/**
 * Reads the record line b[start, end): true when it is certainly canonical JSON of a valid
 * ledger record (then `fields` holds its compared fields), false when not sure (ask the reference).
 */
export function readRecordLine(b, start, end) {
  const generation = ++state.generation;
  if (b[start] !== 123 || end - start < 2) return false;
  let i = start + 1;
  let present = 0;
  let key = -1;
  for (;;) {
    if (b[i] !== QUOTE) return false;
    key = keyAt(b, i, end, key);
    if (key < 0) return false;
    const keyStop = out[1];
    if (b[keyStop] !== 58) return false;
    const valueStart = keyStop + 1;
    const c = b[valueStart];
    let kind;
    let valueStop;
    out[0] = 0;
    out[1] = 0;
    if (c === QUOTE) {
      kind = K_STRING;
      valueStop = stringEnd(b, valueStart, end);
    } else if (c === 123) {
      kind = K_OBJECT;
      valueStop = objectEnd(b, valueStart, end, 1);
    } else if (c === 91) {
      kind = K_ARRAY;
      valueStop = valueEnd(b, valueStart, end, 0);
    } else if (c === 116 || c === 102 || c === 110) {
      kind = c === 116 ? K_TRUE : c === 102 ? K_FALSE : K_NULL;
      valueStop = valueEnd(b, valueStart, end, 0);
    } else {
      kind = K_NUMBER;
      valueStop = numberEnd(b, valueStart, end);
      numberOf[key] = outNumber[0];
    }
    if (valueStop < 0 || valueStop >= end) return false;
    stamp[key] = generation;
    kindOf[key] = kind;
    startOf[key] = valueStart;
    endOf[key] = valueStop;
    escapedOf[key] = out[0];
    hexRunOf[key] = out[1];
    present += 1;
    const next = b[valueStop];
    if (next === 125) {
      if (valueStop + 1 !== end) return false;
      break;
    }
    if (next !== 44) return false;
    i = valueStop + 1;
  }
  if (MODE === 1) return true;
  // The shape of the record's type, in its version.
  if (stamp[ID_V] !== generation || kindOf[ID_V] !== K_NUMBER) return false;
  const version = numberOf[ID_V];
  const types = version === 2 ? typesV2 : version === 1 ? typesV1 : undefined;
  if (
    types === undefined ||
    stamp[ID_TYPE] !== generation ||
    kindOf[ID_TYPE] !== K_STRING ||
    escapedOf[ID_TYPE] === 1
  )
    return false;
  const type = typeName(b, startOf[ID_TYPE] + 1, endOf[ID_TYPE] - 1);
  const node = types.get(type);
  if (node === undefined) return false;
  let known = 0;
  const list = node.fields;
  for (let f = 0; f < list.length; f++) {
    const field = list[f];
    const k = field.id;
    if (stamp[k] !== generation) {
      if (field.required) return false;
      continue;
    }
    known += 1;
    const kind = kindOf[k];
    if (kind === K_OBJECT || kind === K_ARRAY) {
      if (walk(b, end, field.node, startOf[k]) !== endOf[k]) return false;
    } else if (!scalarFits(b, field.node, kind, startOf[k], endOf[k], numberOf[k], escapedOf[k], hexRunOf[k]))
      return false;
  }
  if (known !== present) return false;
  if (MODE === 2) return true;
  // Hand over the compared fields.
  fields.version = version;
  fields.type = type;
  fields.seq = numberOf[ID_SEQ];
  fields.runSeq = numberOf[ID_RUN_SEQ];
  fields.ts = numberOf[ID_TS];
  fields.runId = stringField(b, ID_RUN_ID, generation, true);
  fields.prevStart = kindOf[ID_PREV] === K_NULL ? -1 : startOf[ID_PREV] + 1;
  fields.callId = stringField(b, ID_CALL_ID, generation, false) ?? null;
  fields.attempt = stamp[ID_ATTEMPT] === generation ? numberOf[ID_ATTEMPT] : 0;
  fields.tool = stringField(b, ID_TOOL, generation, true) ?? null;
  fields.argumentsDigest = stringField(b, ID_ARGUMENTS_DIGEST, generation, false) ?? null;
  fields.policyDigestStart = stamp[ID_POLICY_DIGEST] === generation ? startOf[ID_POLICY_DIGEST] + 1 : -1;
  return true;
}

// ---------------------------------------------------------------------------------------------
// The measurement.
const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node bench/record-reader.mjs FILE [--rounds 7]');
  const at = process.argv.indexOf('--rounds');
  const rounds = at > 0 ? Number(process.argv[at + 1]) : 7;
  const bytes = readFileSync(file);
  // Record lines: after line 1, up to the closing `]}`, each but the last ending `,`.
  const starts = [];
  const ends = [];
  let start = bytes.indexOf(10) + 1;
  for (;;) {
    const stop = bytes.indexOf(10, start);
    if (stop < 0 || bytes[start] === 93) break;
    starts.push(start);
    ends.push(bytes[stop - 1] === 44 ? stop - 1 : stop);
    start = stop + 1;
  }
  const count = starts.length;
  let totalBytes = 0;
  for (let i = 0; i < count; i++) totalBytes += ends[i] - starts[i];

  // Agreement first: every line both accept, and the fields handed over are the parse's.
  let unsure = 0;
  for (let i = 0; i < count; i++) {
    const line = bytes.latin1Slice(starts[i], ends[i]);
    const record = parseRecordLine(line, i + 2);
    const reference = isLedgerRecord(record);
    const mine = readRecordLine(bytes, starts[i], ends[i]);
    if (!mine) {
      unsure += 1;
      continue;
    }
    if (MODE !== 0) continue;
    if (!reference) throw new Error(`line ${i + 2}: the reader accepts what the shape check does not`);
    const expected = [record.run_id, record.seq, record.run_seq, record.ts, record.prev, record.type];
    const prev = fields.prevStart < 0 ? null : bytes.latin1Slice(fields.prevStart, fields.prevStart + 71);
    const got = [fields.runId, fields.seq, fields.runSeq, fields.ts, prev, fields.type];
    if (JSON.stringify(expected) !== JSON.stringify(got))
      throw new Error(`line ${i + 2}: fields differ: ${JSON.stringify(got)} vs ${JSON.stringify(expected)}`);
    if (
      (record.call_id ?? null) !== fields.callId ||
      (record.arguments_digest ?? null) !== fields.argumentsDigest
    )
      throw new Error(`line ${i + 2}: call fields differ`);
  }

  let sink = 0;
  const today = () => {
    for (let i = 0; i < count; i++) {
      const record = parseRecordLine(bytes.latin1Slice(starts[i], ends[i]), i + 2);
      if (isLedgerRecord(record)) sink += record.seq;
    }
  };
  const reader = () => {
    for (let i = 0; i < count; i++) {
      if (readRecordLine(bytes, starts[i], ends[i])) sink += fields.seq;
      else {
        const record = parseRecordLine(bytes.latin1Slice(starts[i], ends[i]), i + 2);
        if (isLedgerRecord(record)) sink += record.seq;
      }
    }
  };
  const built = () => {
    for (let i = 0; i < count; i++) {
      const record = builtReader(bytes, starts[i], ends[i]);
      if (record !== undefined) sink += record.seq;
      else {
        const parsed = parseRecordLine(bytes.latin1Slice(starts[i], ends[i]), i + 2);
        if (isLedgerRecord(parsed)) sink += parsed.seq;
      }
    }
  };
  const time = (run) => {
    const cpu = process.cpuUsage();
    run();
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / count; // µs of CPU per line
  };
  const load = () => loadavg()[0].toFixed(2);
  console.log(
    `record lines of ${file}: ${count}, mean ${(totalBytes / count).toFixed(0)} bytes; reader not sure of ${unsure}`,
  );
  console.log(`Node ${process.version}, load before ${load()}; µs of CPU per line, interleaved rounds`);
  console.log('round   today (parse+canonical+shape)   reader   ratio   built reader   ratio   load');
  const a = [];
  const r = [];
  const q = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which runs first, so that neither always gets the warmer or quieter slot.
    const first = round % 2 === 0;
    const x = first ? time(today) : undefined;
    const y = time(reader);
    const w = time(built);
    const z = first ? x : time(today);
    a.push(z);
    r.push(y);
    q.push(w);
    console.log(
      `${String(round + 1).padStart(5)}   ${z.toFixed(3).padStart(29)}   ${y.toFixed(3).padStart(6)}   ${(y / z).toFixed(2).padStart(5)}   ${w.toFixed(3).padStart(12)}   ${(w / z).toFixed(2).padStart(5)}   ${load()}`,
    );
  }
  const best = (values) => Math.min(...values);
  const median = (values) => [...values].sort((p, q) => p - q)[Math.floor(values.length / 2)];
  console.log(
    `best: today ${best(a).toFixed(3)} µs, reader ${best(r).toFixed(3)} µs (ratio ${(best(r) / best(a)).toFixed(2)}, median ${median(r.map((y, i) => y / a[i])).toFixed(2)}), built reader ${best(q).toFixed(3)} µs (ratio ${(best(q) / best(a)).toFixed(2)}, median ${median(q.map((w, i) => w / a[i])).toFixed(2)}); load after ${load()} (sink ${sink % 7})`,
  );
}
