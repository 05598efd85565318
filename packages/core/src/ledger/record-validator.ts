// A fast check of ledger records, compiled once from the protocol's own zod schema
// (`ledgerRecordSchema`), so that there is one definition of the format and no second copy to
// drift. Parsing with zod costs a few µs a record; this check costs a fraction of that, which is
// what lets the verifier reach its throughput target and keeps validation on the append path.
//
// It understands only the zod constructs the record schema uses (objects, strict or not,
// discriminated unions, strings with regex checks, safe integers with bounds, literals, enums,
// nullable, optional, arrays, string records, unknown); any other construct makes it defer to
// zod for that record type. It may be stricter than zod (it wants plain objects) but never
// looser: callers treat `false` as "ask zod", never as a verdict.
import {
  bundleSchema,
  bundleV2Schema,
  bundleV3Schema,
  CallgateError,
  ledgerRecordSchema,
  ledgerRecordV2Schema,
} from '@callgate/protocol';

type Check = (value: unknown) => boolean;

interface ZodLike {
  _zod: { def: Record<string, unknown> & { type: string; checks?: ZodLike[] } };
  safeParse(value: unknown): { success: boolean };
}

const defOf = (schema: unknown): ZodLike['_zod']['def'] => (schema as ZodLike)._zod.def;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** 0 for '0'–'9' and 'a'–'f' (lowercase hex digits), else 1, by char code below 128. */
const NOT_HEX = new Uint8Array(128).fill(1);
for (const c of '0123456789abcdef') NOT_HEX[c.charCodeAt(0)] = 0;

/**
 * The digest patterns of the record format (`^<prefix>:[0-9a-f]{64}$` with a literal prefix of
 * letters, digits and '-') as a loop over char codes: exactly what the regex accepts, cheaper.
 */
function digestPatternCheck(pattern: RegExp): Check | undefined {
  const match = /^\^([a-z0-9-]+):\[0-9a-f\]\{64\}\$$/.exec(pattern.source);
  if (match === null || pattern.flags !== '') return undefined;
  const prefix = `${match[1]}:`;
  const length = prefix.length + 64;
  return (value) => {
    if (typeof value !== 'string' || value.length !== length || !value.startsWith(prefix)) return false;
    for (let i = prefix.length; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 128 || NOT_HEX[code] === 1) return false;
    }
    return true;
  };
}

function compileString(checks: readonly ZodLike[]): Check | undefined {
  if (checks.length === 1) {
    const pattern = (checks[0] as ZodLike)._zod.def.pattern;
    const fast = pattern instanceof RegExp ? digestPatternCheck(pattern) : undefined;
    if (fast) return fast;
  }
  const patterns: RegExp[] = [];
  for (const check of checks) {
    const def = check._zod.def as { check?: string; format?: string; pattern?: RegExp };
    if (def.check !== 'string_format' || def.format !== 'regex' || !(def.pattern instanceof RegExp))
      return undefined;
    if (def.pattern.global || def.pattern.sticky) return undefined;
    patterns.push(def.pattern);
  }
  return (value) => typeof value === 'string' && patterns.every((pattern) => pattern.test(value));
}

function compileNumber(checks: readonly ZodLike[]): Check | undefined {
  let integer = false;
  let minimum = Number.NEGATIVE_INFINITY;
  let minimumInclusive = true;
  let maximum = Number.POSITIVE_INFINITY;
  let maximumInclusive = true;
  for (const check of checks) {
    const def = check._zod.def as { check?: string; format?: string; value?: unknown; inclusive?: boolean };
    if (def.check === 'number_format' && def.format === 'safeint') integer = true;
    else if (def.check === 'greater_than' && typeof def.value === 'number') {
      minimum = def.value;
      minimumInclusive = def.inclusive === true;
    } else if (def.check === 'less_than' && typeof def.value === 'number') {
      maximum = def.value;
      maximumInclusive = def.inclusive === true;
    } else return undefined;
  }
  return (value) =>
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!integer || Number.isSafeInteger(value)) &&
    (minimumInclusive ? value >= minimum : value > minimum) &&
    (maximumInclusive ? value <= maximum : value < maximum);
}

/**
 * A JavaScript expression over the variable `x` that is true exactly when `check` (compiled from
 * `schema`) is: inline for the leaf types a record is made of, so that a record's object check is
 * one straight function; else a call of the compiled check, kept in `constants`.
 */
function expressionOf(schema: unknown, constants: unknown[], check: Check): string {
  const def = defOf(schema);
  const checks = def.checks ?? [];
  const constant = (value: unknown) => `c[${constants.push(value) - 1}]`;
  switch (def.type) {
    case 'boolean':
      return "typeof x === 'boolean'";
    case 'unknown':
    case 'any':
      return 'true';
    case 'literal': {
      const values = def.values as unknown[];
      if (values.every((value) => typeof value === 'string' || typeof value === 'boolean'))
        return `(${values.map((value) => `x === ${JSON.stringify(value)}`).join(' || ') || 'false'})`;
      break;
    }
    case 'enum': {
      const values = Object.values(def.entries as Record<string, unknown>);
      if (values.every((value) => typeof value === 'string'))
        return `(${values.map((value) => `x === ${JSON.stringify(value)}`).join(' || ') || 'false'})`;
      break;
    }
    case 'string': {
      if (checks.length === 0) return "typeof x === 'string'";
      break;
    }
    case 'nullable':
    case 'optional': {
      const inner = compile(def.innerType);
      if (inner === undefined) break;
      const empty = def.type === 'nullable' ? 'null' : 'undefined';
      return `(x === ${empty} || ${expressionOf(def.innerType, constants, inner)})`;
    }
    default:
      break;
  }
  return `${constant(check)}(x)`;
}

/**
 * An object's check as one generated function: each known field read by name (a property access
 * V8 caches, where a loop over keys is a generic lookup) and checked inline.
 */
function compileObject(def: ZodLike['_zod']['def']): Check | undefined {
  const shape = def.shape as Record<string, unknown>;
  const catchall = def.catchall === undefined ? undefined : defOf(def.catchall).type;
  if (catchall !== undefined && catchall !== 'never') return undefined;
  const constants: unknown[] = [isPlainObject];
  const lines = ['if (!c[0](v)) return false;', 'let present = 0;', 'let x;'];
  for (const [key, schema] of Object.entries(shape)) {
    const check = compile(schema);
    if (check === undefined) return undefined;
    // zod wants the key present unless its schema is optional (even z.unknown() does).
    const required = (schema as { _zod: { optin?: string } })._zod.optin !== 'optional';
    const name = JSON.stringify(key);
    lines.push(
      `x = v[${name}];`,
      `if (!(${expressionOf(schema, constants, check)})) return false;`,
      `if (x !== undefined) present += 1;${required ? ` else if (!(${name} in v)) return false;` : ''}`,
    );
  }
  if (catchall === 'never') {
    // As many own keys as known keys present: no unknown key (the usual case, without a lookup).
    const known = new Set(Object.keys(shape));
    lines.push(
      'const keys = Object.keys(v);',
      `return keys.length === present || keys.every((key) => ${`c[${constants.push(known) - 1}]`}.has(key));`,
    );
  } else lines.push('return true;');
  try {
    return new Function('c', `return function check(v) {\n${lines.join('\n')}\n};`)(constants) as Check;
  } catch {
    // Code generation disallowed (node --disallow-code-generation-from-strings): zod decides.
    return undefined;
  }
}

function compileUnion(def: ZodLike['_zod']['def']): Check | undefined {
  const discriminator = def.discriminator;
  if (typeof discriminator !== 'string') return undefined;
  const byValue = new Map<unknown, Check>();
  for (const option of def.options as ZodLike[]) {
    const optionDef = defOf(option);
    const tag =
      optionDef.type === 'object' ? (optionDef.shape as Record<string, unknown>)[discriminator] : undefined;
    const tagDef = tag === undefined ? undefined : defOf(tag);
    if (tagDef?.type !== 'literal') return undefined;
    // An option this compiler cannot read is checked by zod itself.
    const check = compile(option) ?? ((value: unknown) => option.safeParse(value).success);
    for (const literal of tagDef.values as unknown[]) byValue.set(literal, check);
  }
  return (value) => {
    if (!isPlainObject(value)) return false;
    const check = byValue.get(value[discriminator]);
    return check?.(value) === true;
  };
}

/** A check equivalent to (or stricter than) `schema.safeParse(value).success`, or undefined. */
function compile(schema: unknown): Check | undefined {
  const def = defOf(schema);
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'string':
      return compileString(checks);
    case 'number':
      return compileNumber(checks);
    case 'boolean':
      return checks.length === 0 ? (value) => typeof value === 'boolean' : undefined;
    case 'literal': {
      const values = def.values as unknown[];
      return (value) => values.includes(value);
    }
    case 'enum': {
      const values = new Set(Object.values(def.entries as Record<string, unknown>));
      return (value) => (typeof value === 'string' || typeof value === 'number') && values.has(value);
    }
    case 'unknown':
    case 'any':
      return () => true;
    case 'nullable':
    case 'optional': {
      const inner = compile(def.innerType);
      if (inner === undefined) return undefined;
      const empty = def.type === 'nullable' ? null : undefined;
      return (value) => value === empty || inner(value);
    }
    case 'array': {
      const element = checks.length === 0 ? compile(def.element) : undefined;
      if (element === undefined) return undefined;
      return (value) => Array.isArray(value) && value.every(element);
    }
    case 'record': {
      const keyDef = defOf(def.keyType);
      const item = compile(def.valueType);
      if (keyDef.type !== 'string' || (keyDef.checks ?? []).length > 0 || item === undefined)
        return undefined;
      return (value) => isPlainObject(value) && Object.values(value).every(item);
    }
    case 'object':
      return checks.length === 0 ? compileObject(def) : undefined;
    case 'union':
      return checks.length === 0 ? compileUnion(def) : undefined;
    default:
      return undefined;
  }
}

/**
 * Compiles a fast check from a zod schema: true when `value` certainly passes
 * `schema.safeParse`, false when it fails or the check is not certain (then ask zod). Schemas
 * using constructs the compiler does not know give a check that always says false.
 */
export function compileSchemaCheck(schema: unknown): (value: unknown) => boolean {
  return compile(schema) ?? (() => false);
}

/**
 * True when `value` is certainly a valid version 1 ledger record (it passes `ledgerRecordSchema`).
 * False means "not certain": run `ledgerRecordSchema.safeParse` for the verdict and its message.
 */
const isLedgerRecordV1 = compileSchemaCheck(ledgerRecordSchema);
const isLedgerRecordV2 = compileSchemaCheck(ledgerRecordV2Schema);
export const isLedgerRecord = (value: unknown): boolean =>
  (value as { v?: unknown } | null)?.v === 2 ? isLedgerRecordV2(value) : isLedgerRecordV1(value);

/** The record schema of `value`'s format version: version 2 when `v` is 2, else version 1. */
export function recordSchemaOf(value: unknown): typeof ledgerRecordSchema | typeof ledgerRecordV2Schema {
  return (value as { v?: unknown } | null)?.v === 2 ? ledgerRecordV2Schema : ledgerRecordSchema;
}

/**
 * Checks a record before it is written: the fast check, and zod's verdict when it is not certain.
 * @throws CallgateError `ledger-invalid` naming the first wrong field.
 */
export function assertLedgerRecord(record: { type: unknown }): void {
  if (isLedgerRecord(record)) return;
  const checked = recordSchemaOf(record).safeParse(record);
  if (checked.success) return;
  const issue = checked.error.issues[0];
  throw new CallgateError(
    'ledger-invalid',
    `invalid ${String(record.type)} record: ${issue?.path.join('.') || 'record'}: ${issue?.message}`,
  );
}

/** True when `value` certainly passes `bundleSchema` (records unchecked: they are `unknown`). */
export const isBundleShape: (value: unknown) => boolean = compileSchemaCheck(bundleSchema);

/** True when `value` certainly passes `bundleV2Schema` (records unchecked: they are `unknown`). */
export const isBundleV2Shape: (value: unknown) => boolean = compileSchemaCheck(bundleV2Schema);

/** True when `value` certainly passes `bundleV3Schema` (records as strings, unparsed). */
export const isBundleV3Shape: (value: unknown) => boolean = compileSchemaCheck(bundleV3Schema);
