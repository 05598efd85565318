import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { sha256Digest } from '../crypto.js';
import { numberHeldExactly } from './exact-number.js';
import { isNormalizedMarker, NORMALIZE_RULE, NORMALIZE_RULE_2, recordable } from './normalize.js';

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

  it('commits a number kept with digits a double does not hold under /2, over the raw text (generated)', () => {
    const token = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.integer({ min: -400, max: 20 }),
      )
      .map(([sign, whole, fraction, power]) => `${sign}${whole}.${fraction}e${power}`);
    fc.assert(
      fc.property(token, fc.string(), (text, key) => {
        const { value, reasons } = recordable({ [key]: [new LosslessNumber(text)] });
        if (numberHeldExactly(text)) return; // the integer rule or nothing: not this class
        const number = Number(text);
        if (!Number.isFinite(number) || (Number.isInteger(number) && !Number.isSafeInteger(number))) return;
        expect(reasons).toEqual(['inexact-number']);
        const raw = `{${JSON.stringify(key)}:[${text}]}`;
        expect(value).toEqual({
          $callgate: 'normalized',
          rule: NORMALIZE_RULE_2,
          reasons: ['inexact-number'],
          bytes: Buffer.byteLength(raw, 'utf8'),
          sha256: sha256Digest(Buffer.from(raw, 'utf8')),
        });
        expect(isNormalizedMarker(value)).toBe(true);
      }),
    );
  });

  it('keeps writing /1 when no reason of /2 is involved', () => {
    const marker = recordable([new LosslessNumber('12345678901234567890'), '\ud800']).value;
    expect(marker).toMatchObject({ rule: NORMALIZE_RULE, reasons: ['lone-surrogate', 'unsafe-integer'] });
    const both = recordable([new LosslessNumber('1e-400'), '\ud800']).value as Record<string, unknown>;
    expect(both).toMatchObject({ rule: NORMALIZE_RULE_2, reasons: ['inexact-number', 'lone-surrogate'] });
    expect(isNormalizedMarker({ ...both, rule: NORMALIZE_RULE })).toBe(false);
    expect(isNormalizedMarker({ ...both, reasons: ['lone-surrogate'] })).toBe(false);
  });
});
