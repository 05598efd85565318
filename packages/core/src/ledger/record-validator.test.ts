import { bundleSchema } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBundleShape, isLedgerRecord, recordSchemaOf } from './record-validator.js';
import { buildBundleFixture } from './testing/fixture.js';

const { bundle } = await buildBundleFixture();
const records = bundle.records as Record<string, unknown>[];

/** Odd values a tampered or hand-made record may hold. */
const oddValue = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    undefined,
    null,
    -1,
    0,
    1,
    1.5,
    2 ** 53,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '',
    `sha256:${'0'.repeat(64)}`,
    `sha256:${'A'.repeat(64)}`,
    `sha256:${'0'.repeat(63)}`,
    `hmac-sha256:${'0'.repeat(64)}`,
    `hmac-sha256:${'0'.repeat(64)}\n`,
    `hmac-sha256:${'g'.repeat(64)}`,
    1,
    2,
    'allow',
    'approved',
    'pending',
    'ok',
    'run-end',
    'call-decision',
    [],
    ['x'],
    {},
    { a: 'b' },
    { a: 1 },
  ),
);

const mutation = fc.record({
  record: fc.nat(),
  action: fc.constantFrom('set', 'delete', 'add', 'nested'),
  key: fc.nat(),
  value: oddValue,
});

function mutate(record: Record<string, unknown>, change: { action: string; key: number; value: unknown }) {
  const copy = structuredClone(record);
  const keys = Object.keys(copy);
  const key = keys[change.key % keys.length] as string;
  if (change.action === 'set') copy[key] = change.value;
  if (change.action === 'delete') delete copy[key];
  if (change.action === 'add') copy[`extra_${change.key % 3}`] = change.value;
  if (change.action === 'nested') {
    const inner = copy[key];
    if (Array.isArray(inner) && inner.length > 0) inner[change.key % inner.length] = change.value;
    else if (inner !== null && typeof inner === 'object') {
      const innerKeys = Object.keys(inner);
      const target = innerKeys[change.key % Math.max(1, innerKeys.length)] ?? 'x';
      (inner as Record<string, unknown>)[target] = change.value;
    } else copy[key] = [change.value];
  }
  return copy;
}

describe('isLedgerRecord', () => {
  it('accepts every record of a realistic run', () => {
    for (const record of records) expect(isLedgerRecord(record), JSON.stringify(record)).toBe(true);
  });

  it("gives zod's verdict on any change to a record, and never accepts what zod refuses", () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (changes) => {
        let value = records[(changes[0]?.record ?? 0) % records.length] as Record<string, unknown>;
        for (const change of changes) value = mutate(value, change);
        const zod = recordSchemaOf(value).safeParse(value).success;
        const fast = isLedgerRecord(value);
        if (fast) expect(zod, JSON.stringify(value)).toBe(true);
        expect(fast).toBe(zod);
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses what is not a record object', () => {
    for (const value of [null, undefined, 1, 'run-end', [], [records[0]], new Date()])
      expect(isLedgerRecord(value)).toBe(false);
    expect(isLedgerRecord(Object.create(records[0] as object))).toBe(false);
  });
});

describe('isBundleShape', () => {
  it('accepts an exported bundle and agrees with zod on changed ones', () => {
    expect(isBundleShape(bundle)).toBe(true);
    const top = fc.record({ key: fc.constantFrom(...Object.keys(bundle)), value: oddValue });
    fc.assert(
      fc.property(top, fc.boolean(), ({ key, value }, remove) => {
        const copy = structuredClone(bundle) as Record<string, unknown>;
        if (remove) delete copy[key];
        else copy[key] = value;
        const zod = bundleSchema.safeParse(copy).success;
        if (isBundleShape(copy)) expect(zod).toBe(true);
        expect(isBundleShape(copy)).toBe(zod);
      }),
      { numRuns: 2000 },
    );
    const badProof = structuredClone(bundle);
    (badProof.proofs[0] as { tree_size: number }).tree_size = 0;
    expect(isBundleShape(badProof)).toBe(false);
    expect(bundleSchema.safeParse(badProof).success).toBe(false);
  });
});
