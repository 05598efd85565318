// The ledger record schemas (versions 1 and 2) compiled, once, from their zod definitions into
// plain nodes that the byte reader of record lines (`record-line-reader.ts`) checks a line's
// fields against, so that the record format has one definition. Only the constructs the record
// schemas use are understood (strict objects, discriminated unions on `type`, strings plain or
// with one digest pattern, safe integers and numbers with bounds, literals, enums, nullable,
// optional, arrays, string records, unknown); a record type using any other is left out, and the
// reader answers "not sure" for its lines (the reference check decides them).
import { ledgerRecordSchema, ledgerRecordV2Schema } from '@callgate/protocol';

/** Node kinds. */
export const STRING = 1;
export const DIGEST = 2;
export const NUMBER = 3;
export const BOOLEAN = 4;
export const NUMBER_LITERAL = 5;
export const ENUM = 6;
export const NULLABLE = 7;
export const OPTIONAL = 8;
export const ARRAY = 9;
export const RECORD = 10;
export const OBJECT = 11;
export const ANY = 12;

/** One field of an object node: its key's id (index in {@link KEYS}), its value's node. */
export interface ShapeField {
  name: string;
  id: number;
  node: ShapeNode;
  required: boolean;
}

/**
 * A compiled schema node. Every node has every field (one hidden class, so the reader's reads
 * of them stay monomorphic); which fields mean something depends on `kind`.
 */
export interface ShapeNode {
  kind: number;
  /** DIGEST: the ASCII bytes before the 64 lowercase hex digits (`sha256:`, `hmac-sha256:`). */
  prefix: Uint8Array;
  /** NUMBER: a safe integer (zod `.int()`), and the bounds. */
  integer: boolean;
  minimum: number;
  minimumInclusive: boolean;
  maximum: number;
  maximumInclusive: boolean;
  /** NUMBER_LITERAL: the value. */
  value: number;
  /** ENUM (and string literals): the values, as text and as ASCII bytes. */
  names: readonly string[];
  values: readonly Uint8Array[];
  /** NULLABLE, OPTIONAL: the inner node; ARRAY: the element; RECORD: the value. */
  inner: ShapeNode | undefined;
  /** OBJECT: its fields, whether unknown keys are refused, how many fields are required. */
  fields: readonly ShapeField[];
  strict: boolean;
  requiredCount: number;
}

interface ZodDef extends Record<string, unknown> {
  type: string;
  checks?: Array<{ _zod: { def: Record<string, unknown> } }>;
}
const defOf = (schema: unknown): ZodDef => (schema as { _zod: { def: ZodDef } })._zod.def;

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (char) => char.charCodeAt(0));
const isAscii = (text: string): boolean => /^[\x20-\x7e]*$/.test(text) && !/["\\]/.test(text);

function node(kind: number, extra: Partial<ShapeNode> = {}): ShapeNode {
  return {
    kind,
    prefix: new Uint8Array(0),
    integer: false,
    minimum: Number.NEGATIVE_INFINITY,
    minimumInclusive: true,
    maximum: Number.POSITIVE_INFINITY,
    maximumInclusive: true,
    value: 0,
    names: [],
    values: [],
    inner: undefined,
    fields: [],
    strict: false,
    requiredCount: 0,
    ...extra,
  };
}

/** Every key name of every object node, collected while compiling. */
const keyNames = new Set<string>();

function compileNumber(checks: ZodDef['checks']): ShapeNode | undefined {
  const compiled = node(NUMBER);
  for (const check of checks ?? []) {
    const def = check._zod.def as { check?: string; format?: string; value?: unknown; inclusive?: boolean };
    if (def.check === 'number_format' && def.format === 'safeint') compiled.integer = true;
    else if (def.check === 'greater_than' && typeof def.value === 'number') {
      compiled.minimum = def.value;
      compiled.minimumInclusive = def.inclusive === true;
    } else if (def.check === 'less_than' && typeof def.value === 'number') {
      compiled.maximum = def.value;
      compiled.maximumInclusive = def.inclusive === true;
    } else return undefined;
  }
  return compiled;
}

function compileStrings(values: readonly unknown[]): ShapeNode | undefined {
  if (!values.every((value): value is string => typeof value === 'string' && isAscii(value)))
    return undefined;
  return node(ENUM, { names: values, values: values.map(ascii) });
}

function compileNode(schema: unknown): ShapeNode | undefined {
  const def = defOf(schema);
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'string': {
      if (checks.length === 0) return node(STRING);
      const pattern = checks.length === 1 ? checks[0]?._zod.def.pattern : undefined;
      const match =
        pattern instanceof RegExp ? /^\^([a-z0-9-]+):\[0-9a-f\]\{64\}\$$/.exec(pattern.source) : null;
      if (match === null || (pattern as RegExp).flags !== '') return undefined;
      return node(DIGEST, { prefix: ascii(`${match[1]}:`) });
    }
    case 'number':
      return compileNumber(checks);
    case 'boolean':
      return checks.length === 0 ? node(BOOLEAN) : undefined;
    case 'literal': {
      const values = def.values as unknown[];
      if (values.length === 1 && typeof values[0] === 'number')
        return node(NUMBER_LITERAL, { value: values[0] });
      return compileStrings(values);
    }
    case 'enum':
      return compileStrings(Object.values(def.entries as Record<string, unknown>));
    case 'nullable':
    case 'optional': {
      const inner = compileNode(def.innerType);
      return inner && node(def.type === 'nullable' ? NULLABLE : OPTIONAL, { inner });
    }
    case 'array': {
      const inner = checks.length === 0 ? compileNode(def.element) : undefined;
      return inner && node(ARRAY, { inner });
    }
    case 'record': {
      const key = defOf(def.keyType);
      if (key.type !== 'string' || (key.checks ?? []).length > 0) return undefined;
      const inner = compileNode(def.valueType);
      return inner && node(RECORD, { inner });
    }
    case 'object': {
      if (checks.length > 0) return undefined;
      const catchall = def.catchall === undefined ? undefined : defOf(def.catchall).type;
      if (catchall !== undefined && catchall !== 'never') return undefined;
      const fields: ShapeField[] = [];
      for (const [name, field] of Object.entries(def.shape as Record<string, unknown>)) {
        const compiled = compileNode(field);
        if (compiled === undefined || !isAscii(name)) return undefined;
        keyNames.add(name);
        const required = (field as { _zod: { optin?: string } })._zod.optin !== 'optional';
        fields.push({ name, id: -1, node: compiled, required });
      }
      const requiredCount = fields.filter((field) => field.required).length;
      return node(OBJECT, { strict: catchall === 'never', fields, requiredCount });
    }
    case 'unknown':
    case 'any':
      return node(ANY);
    default:
      return undefined;
  }
}

/** Each record type's object node, by its `type` text; a type the compiler cannot read is absent. */
function compileUnion(schema: unknown): Map<string, ShapeNode> {
  const byType = new Map<string, ShapeNode>();
  for (const option of defOf(schema).options as unknown[]) {
    const tag = defOf((defOf(option).shape as Record<string, unknown>).type).values as unknown[];
    const compiled = compileNode(option);
    if (compiled?.kind === OBJECT && compiled.strict && typeof tag[0] === 'string')
      byType.set(tag[0], compiled);
  }
  return byType;
}

/** Version 1 record types, by `type`. */
export const TYPES_V1: ReadonlyMap<string, ShapeNode> = compileUnion(ledgerRecordSchema);
/** Version 2 record types, by `type`. */
export const TYPES_V2: ReadonlyMap<string, ShapeNode> = compileUnion(ledgerRecordV2Schema);

/** Every key name of the record schemas, sorted by UTF-16 code units (= bytes: all are ASCII). */
export const KEYS: readonly string[] = [...keyNames].sort();
/** {@link KEYS} as ASCII bytes. */
export const KEY_BYTES: readonly Uint8Array[] = KEYS.map(ascii);
const keyIds = new Map(KEYS.map((name, id) => [name, id]));

/** The id (index in {@link KEYS}) of a key of the record schemas; -1 for another. */
export const keyId = (name: string): number => keyIds.get(name) ?? -1;

function assignIds(compiled: ShapeNode | undefined): void {
  if (compiled === undefined) return;
  for (const field of compiled.fields) {
    field.id = keyId(field.name);
    assignIds(field.node);
  }
  assignIds(compiled.inner);
}
for (const types of [TYPES_V1, TYPES_V2]) for (const compiled of types.values()) assignIds(compiled);
