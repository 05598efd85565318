import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isNormalizedMarker, NORMALIZE_RULE, recordable } from './normalize.js';

const awkward = fc.oneof(
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, 2 ** 60, '\ud800', 'x\udfff'),
  fc.bigInt(),
  fc.string(),
  fc.double(),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    awkward,
    fc.array(tie('node')),
    fc.dictionary(fc.string(), tie('node')),
  ),
})).node;

describe('callgate-normalize/1', () => {
  it('is idempotent: a marker committed again keeps its reasons (generated)', () => {
    fc.assert(
      fc.property(value, (input) => {
        const once = recordable(input);
        const twice = recordable(once.value);
        expect(twice.value).toBe(once.value);
        expect(twice.reasons).toEqual(once.reasons);
        expect(isNormalizedMarker(once.value)).toBe(once.reasons.length > 0);
      }),
    );
  });

  it('takes only an exact marker for one', () => {
    const marker = recordable({ score: Number.NaN }).value as Record<string, unknown>;
    expect(marker.rule).toBe(NORMALIZE_RULE);
    expect(isNormalizedMarker(marker)).toBe(true);
    for (const changed of [
      { ...marker, extra: 1 },
      { ...marker, reasons: [] },
      { ...marker, reasons: ['unsafe-integer', 'lone-surrogate'] },
      { ...marker, reasons: ['made-up'] },
      { ...marker, rule: 'callgate-normalize/2' },
      { ...marker, bytes: -1 },
      { ...marker, sha256: 'sha256:XYZ' },
    ]) {
      expect(isNormalizedMarker(changed)).toBe(false);
      expect(recordable(changed)).toEqual({ value: changed, reasons: [] });
    }
  });
});
