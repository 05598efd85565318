// A reader of a bundle file's record line that builds no record object: one pass over the line's
// bytes checks that it is a canonical JSON text (RFC 8785: no whitespace, each object's keys in
// strictly increasing UTF-16 order, numbers in their ECMAScript form, strings escaped as
// JSON.stringify escapes them), noting where each top-level field's value is; then the shape of its
// record type (`record-line-shape.ts`, compiled from the zod schemas); then it hands over only the
// fields the verifier's record checks compare. It is deliberately narrow: an ASCII line of the
// usual form. Whatever it is not certain of (a byte outside 0x20-0x7e, an escaped key, an
// exponent, more than 15 significant digits, a \u escape but a control's, nesting past 32, an
// unknown key or type) it answers "not sure", and the reference path (JSON.parse, the canonical
// check, the shape check) decides the line: it can only be faster, never more lenient.
import type { LedgerRecord } from '@callgate/protocol';
import {
  enumIndex,
  fits,
  K_ARRAY,
  K_FALSE,
  K_NULL,
  K_NUMBER,
  K_OBJECT,
  K_STRING,
  K_TRUE,
  scalarFits,
} from './record-line-fit.js';
import { HEX_RUN, keyAt, numberEnd, outNumber, stringEnd, valueEnd } from './record-line-scan.js';
import {
  ENUM,
  KEYS,
  keyId,
  NULLABLE,
  OPTIONAL,
  type ShapeNode,
  TYPES_V1,
  TYPES_V2,
} from './record-line-shape.js';

// The top-level fields of the line being read, by key id; `stamp` says which are this line's.
const fieldCount = KEYS.length;
const stamp = new Int32Array(fieldCount);
const kindOf = new Uint8Array(fieldCount);
const startOf = new Int32Array(fieldCount);
const endOf = new Int32Array(fieldCount);
const numberOf = new Float64Array(fieldCount);
const escapedOf = new Uint8Array(fieldCount);
const hexRunOf = new Int32Array(fieldCount);
let generation = 0;

const ID_V = keyId('v');
const ID_TYPE = keyId('type');

/** The fields the verifier's record checks read, each a string, number, boolean, null or absent. */
const STRING_FIELDS = [
  'run_id',
  'prev',
  'call_id',
  'approval_id',
  'tool',
  'arguments_digest',
  'arguments_commitment',
  'content_commitment',
  'result_commitment',
  'params_commitment',
  'policy_digest',
] as const;
const ENUM_FIELDS = ['effect', 'error_kind', 'status', 'outcome'] as const;
const NUMBER_FIELDS = ['seq', 'run_seq', 'ts', 'attempt'] as const;
const BOOLEAN_FIELDS = ['edited', 'grant_consumed'] as const;

/**
 * The names of the record fields the reader hands over (beside `v` and `type`): what the
 * verifier's record checks (order, run sequence, chain, calls, fidelity, policies, held
 * commitments, failure labels) read. A check that reads another field must add it here; a test
 * holds the checks to this list.
 */
export const HANDED_OVER_FIELDS: readonly string[] = [
  'v',
  'type',
  ...NUMBER_FIELDS,
  ...STRING_FIELDS,
  ...ENUM_FIELDS,
  ...BOOLEAN_FIELDS,
  'tool_calls',
];

const ID_SEQ = keyId('seq');
const ID_RUN_SEQ = keyId('run_seq');
const ID_TS = keyId('ts');
const ID_ATTEMPT = keyId('attempt');
const ID_RUN_ID = keyId('run_id');
const ID_PREV = keyId('prev');
const ID_CALL_ID = keyId('call_id');
const ID_APPROVAL_ID = keyId('approval_id');
const ID_TOOL = keyId('tool');
const ID_ARGUMENTS_DIGEST = keyId('arguments_digest');
const ID_ARGUMENTS_COMMITMENT = keyId('arguments_commitment');
const ID_CONTENT_COMMITMENT = keyId('content_commitment');
const ID_RESULT_COMMITMENT = keyId('result_commitment');
const ID_PARAMS_COMMITMENT = keyId('params_commitment');
const ID_POLICY_DIGEST = keyId('policy_digest');
const ID_EFFECT = keyId('effect');
const ID_ERROR_KIND = keyId('error_kind');
const ID_STATUS = keyId('status');
const ID_OUTCOME = keyId('outcome');
const ID_EDITED = keyId('edited');
const ID_GRANT_CONSUMED = keyId('grant_consumed');
const ID_TOOL_CALLS = keyId('tool_calls');

/** Every enum value any record type allows a field, by key id: handed over as these strings. */
const enumsByKey: Array<{ names: string[]; values: Uint8Array[] } | undefined> = KEYS.map(() => undefined);
for (const types of [TYPES_V1, TYPES_V2])
  for (const type of types.values())
    for (const field of type.fields) {
      let inner: ShapeNode | undefined = field.node;
      while (inner !== undefined && (inner.kind === NULLABLE || inner.kind === OPTIONAL)) inner = inner.inner;
      if (inner?.kind !== ENUM) continue;
      const known = enumsByKey[field.id] ?? { names: [], values: [] };
      inner.names.forEach((name, index) => {
        if (known.names.includes(name)) return;
        known.names.push(name);
        known.values.push(inner.values[index] as Uint8Array);
      });
      enumsByKey[field.id] = known;
    }
const typeNames = [...new Set([...TYPES_V1.keys(), ...TYPES_V2.keys()])];
const typeBytes = typeNames.map((name) => Uint8Array.from(name, (char) => char.charCodeAt(0)));

/** The last text made for a field whose value repeats from record to record, by key id. */
const lastText: string[] = KEYS.map(() => '');

/** The text of string field `key`: undefined when absent, null for null. */
function textOf(bytes: Buffer, key: number, reuse: boolean): string | null | undefined {
  if (stamp[key] !== generation) return undefined;
  if (kindOf[key] === K_NULL) return null;
  const start = (startOf[key] as number) + 1;
  const stop = (endOf[key] as number) - 1;
  if (escapedOf[key] === 1) return JSON.parse(bytes.toString('latin1', start - 1, stop + 1)) as string;
  if (!reuse) return bytes.toString('latin1', start, stop);
  const last = lastText[key] as string;
  if (last.length === stop - start) {
    let i = 0;
    while (i < last.length && last.charCodeAt(i) === bytes[start + i]) i += 1;
    if (i === last.length) return last;
  }
  const text = bytes.toString('latin1', start, stop);
  lastText[key] = text;
  return text;
}

/** The enum value of field `key` as one shared string: undefined when absent, null for null. */
function enumOf(bytes: Buffer, key: number): string | null | undefined {
  if (stamp[key] !== generation) return undefined;
  if (kindOf[key] === K_NULL) return null;
  const known = enumsByKey[key];
  const index =
    known === undefined
      ? -1
      : enumIndex(bytes, (startOf[key] as number) + 1, (endOf[key] as number) - 1, known.values);
  return index < 0 ? textOf(bytes, key, false) : known?.names[index];
}

/**
 * The number of field `key`, or undefined when absent. A whole number in the 32-bit range is
 * handed over as a small integer (`value | 0`, the same number): a value read from a
 * Float64Array is otherwise a boxed heap number, and the attempt state the call checks keep of
 * each decision would hold two of them (`seq`, `attempt`) until the end of the verification.
 */
function numberOf_(key: number): number | undefined {
  if (stamp[key] !== generation) return undefined;
  const value = numberOf[key] as number;
  const small = value | 0;
  // -0 stays -0 (small is +0 then, equal to it by ===, not by Object.is).
  return small === value && (small !== 0 || 1 / value > 0) ? small : value;
}
const booleanOf = (key: number): boolean | undefined =>
  stamp[key] === generation ? kindOf[key] === K_TRUE : undefined;

/** One top-level field: scans its value at `at`, notes it under `key`; the index after it, or -1. */
function noteField(bytes: Uint8Array, end: number, key: number, at: number): number {
  const code = bytes[at];
  let kind: number;
  let stop: number;
  HEX_RUN[0] = 0;
  HEX_RUN[1] = 0;
  if (code === 34) {
    kind = K_STRING;
    stop = stringEnd(bytes, at, end);
  } else if (code === 123) {
    kind = K_OBJECT;
    stop = valueEnd(bytes, at, end, 0);
  } else if (code === 91) {
    kind = K_ARRAY;
    stop = valueEnd(bytes, at, end, 0);
  } else if (code === 116 || code === 102 || code === 110) {
    kind = code === 116 ? K_TRUE : code === 102 ? K_FALSE : K_NULL;
    stop = valueEnd(bytes, at, end, 0);
  } else {
    kind = K_NUMBER;
    stop = numberEnd(bytes, at, end);
    numberOf[key] = outNumber[0] as number;
  }
  if (stop < 0 || stop >= end) return -1;
  stamp[key] = generation;
  kindOf[key] = kind;
  startOf[key] = at;
  endOf[key] = stop;
  escapedOf[key] = HEX_RUN[0] as number;
  hexRunOf[key] = HEX_RUN[1] as number;
  return stop;
}

/**
 * Reads the record line `bytes[start, end)` (no trailing `,`). When it is certainly the RFC 8785
 * canonical JSON text of a valid version 1 or 2 ledger record, returns an object holding that
 * record's {@link HANDED_OVER_FIELDS} (those it has; the others read `undefined`) — not the
 * record: only the verifier's record checks may read it, and only until the next call (the same
 * object is handed over for every line). Otherwise undefined ("not sure": the
 * line may still be valid; JSON.parse, the canonical check and the shape check decide it).
 */
export function readRecordLine(bytes: Buffer, start: number, end: number): LedgerRecord | undefined {
  generation += 1;
  if (bytes[start] !== 123 || end - start < 2) return undefined;
  let i = start + 1;
  let present = 0;
  let key = -1;
  for (;;) {
    if (bytes[i] !== 34) return undefined;
    key = keyAt(bytes, i, end, key);
    if (key < 0) return undefined;
    const keyStop = HEX_RUN[1] as number;
    if (bytes[keyStop] !== 58) return undefined;
    const stop = noteField(bytes, end, key, keyStop + 1);
    if (stop < 0) return undefined;
    present += 1;
    const next = bytes[stop];
    if (next === 125) {
      if (stop + 1 !== end) return undefined;
      break;
    }
    if (next !== 44) return undefined;
    i = stop + 1;
  }
  // The shape of its type, in its version.
  if (stamp[ID_V] !== generation || kindOf[ID_V] !== K_NUMBER) return undefined;
  const version = numberOf[ID_V];
  const types = version === 2 ? TYPES_V2 : version === 1 ? TYPES_V1 : undefined;
  if (types === undefined || stamp[ID_TYPE] !== generation || kindOf[ID_TYPE] !== K_STRING) return undefined;
  const typeIndex = enumIndex(
    bytes,
    (startOf[ID_TYPE] as number) + 1,
    (endOf[ID_TYPE] as number) - 1,
    typeBytes,
  );
  const type = typeIndex < 0 ? undefined : typeNames[typeIndex];
  const shape = type === undefined ? undefined : types.get(type);
  if (shape === undefined) return undefined;
  let known = 0;
  const fields = shape.fields;
  for (let f = 0; f < fields.length; f++) {
    const field = fields[f] as (typeof fields)[number];
    const id = field.id;
    if (stamp[id] !== generation) {
      if (field.required) return undefined;
      continue;
    }
    known += 1;
    const kind = kindOf[id] as number;
    const at = startOf[id] as number;
    if (kind === K_OBJECT || kind === K_ARRAY) {
      if (fits(bytes, end, field.node, at) !== endOf[id]) return undefined;
    } else if (
      !scalarFits(
        bytes,
        field.node,
        kind,
        at,
        endOf[id] as number,
        numberOf[id] as number,
        escapedOf[id] as number,
        hexRunOf[id] as number,
      )
    )
      return undefined;
  }
  // Every key is one of the type's (all record types are strict objects).
  if (known !== present) return undefined;
  lineBytes = bytes;
  const out = handedOver;
  out.v = version as number;
  out.type = type;
  out.seq = numberOf_(ID_SEQ);
  out.run_seq = numberOf_(ID_RUN_SEQ);
  out.ts = numberOf_(ID_TS);
  out.attempt = numberOf_(ID_ATTEMPT);
  out.run_id = textOf(bytes, ID_RUN_ID, true);
  out.call_id = textOf(bytes, ID_CALL_ID, false);
  out.tool = textOf(bytes, ID_TOOL, true);
  out.policy_digest = textOf(bytes, ID_POLICY_DIGEST, true);
  out.effect = enumOf(bytes, ID_EFFECT);
  out.error_kind = enumOf(bytes, ID_ERROR_KIND);
  out.status = enumOf(bytes, ID_STATUS);
  out.outcome = enumOf(bytes, ID_OUTCOME);
  out.edited = booleanOf(ID_EDITED);
  out.grant_consumed = booleanOf(ID_GRANT_CONSUMED);
  return out as unknown as LedgerRecord;
}

/** The bytes of the line read last that the reader was certain of (its fields are `handedOver`'s). */
let lineBytes: Buffer = Buffer.alloc(0);

/**
 * The fields of the line read last, handed over by {@link readRecordLine}: one object, reused for
 * every line (no object per record for the garbage collector). The ids, numbers and enums the
 * checks read of nearly every record are set per line; the digests, commitments and approval id,
 * which most records' checks never read or compare once, are made from the line's bytes when read
 * (getters over the reader's state, which reads no `this`, so a Proxy of it reads the same). Valid
 * until the next call of `readRecordLine`: a check must copy what it keeps.
 */
class HandedOverFields {
  v = 0;
  type: string | undefined = '';
  seq: number | undefined = 0;
  run_seq: number | undefined = 0;
  ts: number | undefined = 0;
  attempt: number | undefined = 0;
  run_id: string | null | undefined = '';
  call_id: string | null | undefined = '';
  tool: string | null | undefined = '';
  policy_digest: string | null | undefined = '';
  effect: string | null | undefined = '';
  error_kind: string | null | undefined = '';
  status: string | null | undefined = '';
  outcome: string | null | undefined = '';
  edited: boolean | undefined = false;
  grant_consumed: boolean | undefined = false;
  get prev(): string | null | undefined {
    return textOf(lineBytes, ID_PREV, false);
  }
  get approval_id(): string | null | undefined {
    return textOf(lineBytes, ID_APPROVAL_ID, false);
  }
  get arguments_digest(): string | null | undefined {
    return textOf(lineBytes, ID_ARGUMENTS_DIGEST, false);
  }
  get arguments_commitment(): string | null | undefined {
    return textOf(lineBytes, ID_ARGUMENTS_COMMITMENT, false);
  }
  get content_commitment(): string | null | undefined {
    return textOf(lineBytes, ID_CONTENT_COMMITMENT, false);
  }
  get result_commitment(): string | null | undefined {
    return textOf(lineBytes, ID_RESULT_COMMITMENT, false);
  }
  get params_commitment(): string | null | undefined {
    return textOf(lineBytes, ID_PARAMS_COMMITMENT, false);
  }
  get tool_calls(): unknown {
    return stamp[ID_TOOL_CALLS] === generation
      ? JSON.parse(lineBytes.toString('latin1', startOf[ID_TOOL_CALLS], endOf[ID_TOOL_CALLS]))
      : undefined;
  }
}
const handedOver = new HandedOverFields();

/**
 * Whether the `prev` of the line {@link readRecordLine} read last (and was certain of) is
 * `sha256:` and the lowercase hex of the 32 bytes of `digests` at `offset`: compared in the line's
 * bytes, no string made. The same answer as comparing the handed-over `prev` text.
 */
export function prevNamesDigest(digests: Uint8Array, offset: number): boolean {
  if (stamp[ID_PREV] !== generation || kindOf[ID_PREV] !== K_STRING) return false;
  const bytes = lineBytes;
  const start = (startOf[ID_PREV] as number) + 1;
  if ((endOf[ID_PREV] as number) - 1 - start !== 71 || escapedOf[ID_PREV] === 1) return false;
  for (let i = 0; i < 7; i++) if (bytes[start + i] !== SHA256_PREFIX[i]) return false;
  for (let i = 0; i < 32; i++) {
    const byte = digests[offset + i] as number;
    if (
      bytes[start + 7 + 2 * i] !== HEX_DIGITS[byte >> 4] ||
      bytes[start + 8 + 2 * i] !== HEX_DIGITS[byte & 15]
    )
      return false;
  }
  return true;
}
/**
 * Where the `arguments_digest` text of `fields` lies in the file's bytes, when `fields` is the
 * object {@link readRecordLine} handed over last and that value is a string without escapes:
 * sets {@link SPAN} ([0] start, [1] end, of the text between the quotes) and returns the bytes;
 * else undefined (read the field). Lets a check keep the digest as a span of bytes that stay
 * alive anyway, and make its text only if it is ever read.
 */
export function argumentsDigestSpan(fields: object): Buffer | undefined {
  if (fields !== handedOver || stamp[ID_ARGUMENTS_DIGEST] !== generation) return undefined;
  if (kindOf[ID_ARGUMENTS_DIGEST] !== K_STRING || escapedOf[ID_ARGUMENTS_DIGEST] === 1) return undefined;
  SPAN[0] = (startOf[ID_ARGUMENTS_DIGEST] as number) + 1;
  SPAN[1] = (endOf[ID_ARGUMENTS_DIGEST] as number) - 1;
  return lineBytes;
}
/** After {@link argumentsDigestSpan}: the span's start and end. */
export const SPAN = new Int32Array(2);
const SHA256_PREFIX = Uint8Array.from('sha256:', (char) => char.charCodeAt(0));
const HEX_DIGITS = Uint8Array.from('0123456789abcdef', (char) => char.charCodeAt(0));
