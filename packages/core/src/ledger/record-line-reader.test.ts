import { buildBundleFixture } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastCanonicalJson } from '../json/canonical.js';
import { parseRecordLine } from './bundle-text.js';
import {
  argumentsDigestSpan,
  HANDED_OVER_FIELDS,
  prevNamesDigest,
  readRecordLine,
  SPAN,
} from './record-line-reader.js';
import { isLedgerRecord, recordSchemaOf } from './record-validator.js';

/** The reference path: JSON.parse, the canonical check, the shape check (zod when not certain). */
function reference(line: string): Record<string, unknown> | undefined {
  let record: unknown;
  try {
    record = parseRecordLine(line, 2);
  } catch {
    return undefined;
  }
  if (isLedgerRecord(record) || recordSchemaOf(record).safeParse(record).success)
    return record as Record<string, unknown>;
  return undefined;
}

/** The reader over `line`'s UTF-8 bytes, set inside other bytes as a file's line is. */
function read(line: string, before = '', after = ''): Record<string, unknown> | undefined {
  const bytes = Buffer.from(`${before}${line}${after}`, 'utf8');
  const start = Buffer.byteLength(before, 'utf8');
  return readRecordLine(bytes, start, start + Buffer.byteLength(line, 'utf8')) as
    | Record<string, unknown>
    | undefined;
}

const { bundle } = await buildBundleFixture();
const digest = `sha256:${'ab'.repeat(32)}`;
const keyed = `hmac-sha256:${'0f'.repeat(32)}`;
const base = { seq: 7, run_id: 'run-1', run_seq: 3, ts: 1_796_301_596_090, prev: digest };
/** One record of every type, beside the fixture's. */
const bodies: Record<string, unknown>[] = [
  { type: 'run-start', principal: 'p', framework: 'f', labels: { a: 'b', é: 'x' }, parent_run_id: 'r0' },
  { type: 'policy-snapshot', policy_digest: digest },
  {
    type: 'model-message',
    role: 'assistant',
    content_commitment: null,
    content_normalized: ['lone-surrogate'],
    tool_calls: [{ call_id: 'c', minted: false, tool: 't', arguments_commitment: digest }],
  },
  {
    type: 'call-decision',
    call_id: 'c1',
    minted: true,
    attempt: 1,
    tool: 'send',
    arguments_digest: digest,
    arguments_commitment: null,
    effect: 'ask',
    rules: ['r1', 'r\n2'],
    reason: 'because "so"',
    policy_digest: digest,
    error_kind: 'policy-denied',
    provenance_untrusted: true,
  },
  {
    type: 'approval-request',
    approval_id: 'a',
    call_id: 'c1',
    tool: 'send',
    arguments_digest: digest,
    rules: [],
    reason: '',
    expires_at: -5,
  },
  {
    type: 'approval-response',
    approval_id: 'a',
    call_id: 'c1',
    status: 'approved',
    reviewer: null,
    reason: null,
    edited: false,
    arguments_digest: digest,
  },
  {
    type: 'call-end',
    call_id: 'c1',
    attempt: 2,
    tool: 'send',
    outcome: 'ok',
    arguments_digest: null,
    result_commitment: digest,
    result_normalized: ['over-size', 'not-json'],
    duration_ms: 12.5,
    grant_consumed: true,
  },
  { type: 'gap', reason: 'r', from_ts: 1, to_ts: 2, calls: 0 },
  { type: 'run-end', status: 'abandoned', calls: 3 },
  {
    type: 'mcp-exchange',
    method: 'resources/read',
    upstream: 'u',
    target: null,
    params_commitment: digest,
    result_commitment: null,
    error_kind: 'tool-error',
  },
  {
    type: 'refusal',
    kind: 'grant-invalid',
    actor: null,
    call_id: null,
    approval_id: 'a',
    tool: null,
    reason: 'no',
    suppressed: true,
  },
  {
    type: 'effective-arguments',
    call_id: 'c1',
    attempt: 1,
    tool: 'send',
    arguments_digest: digest,
    effective_arguments_digest: digest,
    injected: ['user_id'],
  },
];
/** Version 2 keys its caller-value digests. */
const keyedV2 = (body: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(body).map(([name, value]) => [
      name,
      name.endsWith('arguments_digest') && value !== null ? keyed : value,
    ]),
  );
const records: Record<string, unknown>[] = [
  ...(bundle.records as Record<string, unknown>[]),
  ...bodies.map((body) => ({ ...body, ...base, v: 1 })),
  ...bodies.map((body) => ({ ...keyedV2(body), ...base, v: 2 })),
];
const validRecords = records.filter((record) => reference(fastCanonicalJson(record)) !== undefined);

const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom(
    '',
    '"',
    '\\',
    '\b\f\n\r\t',
    '\u0000\u001f\u007f',
    '\ud800',
    'x\udc00',
    '\ud83d\ude00',
    'é',
    digest,
  ),
);
const oddNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    -0,
    0,
    -1,
    1e21,
    1e-7,
    2 ** 53,
    2 ** 53 + 2,
    999_999_999_999_999,
    1_000_000_000_000_000,
    0.5,
    1,
    2,
    // Where a whole number stops being handed over as a small integer.
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31),
    -(2 ** 31) - 1,
  ),
);
const deep = (depth: number): unknown =>
  depth === 0 ? 1 : depth % 2 ? [deep(depth - 1)] : { a: deep(depth - 1) };
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    oddString,
    oddNumber,
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom(deep(40), deep(31), deep(3), [digest], { a: 'b' }, [{ call_id: 'c' }]),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(oddString, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const fieldName = fc.oneof(
  fc.constantFrom(...new Set(records.flatMap((record) => Object.keys(record)))),
  fc.constantFrom('unknown', 'Seq', 'v2', '__proto__', 'run_id\u0000', 'é'),
);
const TYPES = [...new Set(bodies.map((body) => body.type as string))];

/** Changes to a record, as an object: a field set to anything, a field dropped, another type or version. */
const change = fc.oneof(
  fc.constant((record: Record<string, unknown>) => record),
  fc.tuple(fieldName, value).map(([name, to]) => (record: Record<string, unknown>) => ({
    ...record,
    [name]: to,
  })),
  fieldName.map((name) => (record: Record<string, unknown>) => {
    const { [name]: _dropped, ...rest } = record;
    return rest;
  }),
  fc
    .constantFrom(...TYPES, 'Run-start', 'gap ')
    .map((type) => (record: Record<string, unknown>) => ({ ...record, type })),
  fc.constantFrom(1, 2, 3, '2', 2.5).map((v) => (record: Record<string, unknown>) => ({ ...record, v })),
);

/** Changes to a line's text that keep it JSON (duplicate key, spacing, number forms, escapes). */
const edits: Array<(line: string, at: number) => string> = [
  (line) => line,
  (line, at) => {
    const open = line.indexOf('{"', at % Math.max(1, line.length));
    const end = open < 0 ? -1 : line.indexOf('":', open);
    return end < 0
      ? line
      : `${line.slice(0, end + 2)}0,${line.slice(open + 1, end + 2)}${line.slice(end + 2)}`;
  },
  (line, at) => `${line.slice(0, at % (line.length + 1))} ${line.slice(at % (line.length + 1))}`,
  (line) => line.replace(/:(\d+)([,}\]])/, ':$1.0$2'),
  (line) => line.replace(/:(\d+)([,}\]])/, ':$1e0$2'),
  (line) => line.replace(/:(\d)/, ':-$1'),
  (line) => line.replace(/:(\d+)/, ':12345678901234567890$1'),
  (line) => line.replace(/:(\d+)/, ':0$1'),
  (line) => line.replace(/a/, '\\u0061'),
  (line) => line.replace('\\n', '\\u000a'),
  (line) => line.replace(/"([^"\\]*)":([^,}]*),"([^"\\]*)":/, '"$3":$2,"$1":'),
  (line, at) => line.slice(0, at % (line.length + 1)),
  (line, at) => {
    const i = at % Math.max(1, line.length);
    return `${line.slice(0, i)}${String.fromCharCode(at % 128)}${line.slice(i + 1)}`;
  },
];

describe('readRecordLine', () => {
  it('is certain of every record line callgate writes, of every type and version, and hands over their fields', () => {
    expect(validRecords.length).toBe(records.length);
    for (const record of validRecords) {
      const line = fastCanonicalJson(record);
      const fields = read(line, '{"records":[\n', ',\n]}');
      if (/[^\x20-\x7e]/.test(line)) continue; // non-ASCII: left to the reference path
      expect(fields, line).toBeDefined();
      for (const name of HANDED_OVER_FIELDS)
        expect(fields?.[name], `${name} of ${line}`).toEqual(record[name]);
    }
    expect(new Set(validRecords.map((record) => record.type))).toEqual(new Set(TYPES));
  });

  it('accepts only what JSON.parse, the canonical check and the shape check accept, and hands over their values (generated)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...validRecords),
        change,
        fc.constantFrom('canonical', 'stringify'),
        fc.nat(edits.length - 1),
        fc.nat(),
        (record, changed, form, edit, at) => {
          let line: string;
          try {
            const item = changed(record);
            line = form === 'canonical' ? fastCanonicalJson(item) : JSON.stringify(item);
          } catch {
            return;
          }
          line = (edits[edit] as (line: string, at: number) => string)(line, at);
          const fields = read(line, at % 2 ? '' : '[', at % 3 ? ',' : ',\n{"x":1}');
          if (fields === undefined) return;
          const expected = reference(line);
          expect(expected, line).toBeDefined();
          for (const name of HANDED_OVER_FIELDS)
            expect(fields[name], `${name} of ${line}`).toEqual(expected?.[name]);
          // The arguments digest kept as a span of the line's bytes reads as the parsed value.
          const bytes = argumentsDigestSpan(fields);
          if (bytes !== undefined)
            expect(bytes.toString('latin1', SPAN[0], SPAN[1]), line).toBe(expected?.arguments_digest);
          else if (typeof expected?.arguments_digest === 'string')
            expect(expected.arguments_digest, line).toMatch(/[^\x20-\x7e]|["\\]/);
        },
      ),
      { numRuns: 6000 },
    );
  });

  it('is not sure of a line that is not ASCII, not canonical or not a record', () => {
    const line = fastCanonicalJson(validRecords[0]);
    for (const other of [
      `${line} `,
      line.replace('{', '{ '),
      line.replace('"seq":', '"seq":1,"seq":'),
      line.replace('}', ',"unknown":1}'),
      line.replace(/"seq":\d+/, '"seq":1.0'),
      line.replace(/"seq":\d+/, '"seq":12345678901234567890'),
      line.replace(/"run_id":"/, '"run_id":"é'),
      line.replace(/"run_id":"/, '"run_id":"\\ud800'),
      '{}',
      '[]',
      '',
    ])
      expect(read(other), other).toBeUndefined();
  });
});

describe('prevNamesDigest', () => {
  it('answers what comparing the handed-over prev with the digest text answers (generated)', () => {
    const line = fastCanonicalJson(validRecords.find((record) => typeof record.prev === 'string'));
    const forms = [
      (hex: string) => `"sha256:${hex}"`,
      (hex: string) => `"sha256:${hex.toUpperCase()}"`,
      (hex: string) => `"sha256:${hex.slice(0, 63)}"`,
      (hex: string) => `"sha256:${hex}0"`,
      (hex: string) => `"sha-56:${hex}"`,
      (hex: string) => `"sha256:\\u0030${hex.slice(1)}"`,
      () => 'null',
    ];
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.boolean(),
        fc.nat(forms.length - 1),
        fc.nat(63),
        (digest, other, same, form, flip) => {
          const written = Buffer.from(same ? digest : other).toString('hex');
          const changed =
            flip % 2 === 0
              ? written
              : `${written.slice(0, flip)}${'0123456789abcdef'[(Number.parseInt(written[flip] as string, 16) + 1) % 16]}${written.slice(flip + 1)}`;
          const text = line.replace(
            /"prev":("sha256:[0-9a-f]{64}"|null)/,
            `"prev":${(forms[form] as (hex: string) => string)(changed)}`,
          );
          const fields = read(text, '[', ',');
          if (fields === undefined) return;
          const expected = fields.prev === `sha256:${Buffer.from(digest).toString('hex')}`;
          expect(prevNamesDigest(digest, 0), text).toBe(expected);
          const padded = Buffer.concat([Buffer.alloc(5), digest]);
          expect(prevNamesDigest(padded, 5), text).toBe(expected);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
