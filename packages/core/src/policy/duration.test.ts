import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, MAX_DURATION_MS, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it('reads units, fractions that come to whole milliseconds, and bare milliseconds', () => {
    expect(parseDuration('500ms')).toEqual({ ms: 500 });
    expect(parseDuration('60s')).toEqual({ ms: 60_000 });
    expect(parseDuration('1.5s')).toEqual({ ms: 1_500 });
    expect(parseDuration('30s')).toEqual({ ms: 30_000 });
    expect(parseDuration('5m')).toEqual({ ms: 300_000 });
    expect(parseDuration('1h')).toEqual({ ms: 3_600_000 });
    expect(parseDuration(1500)).toEqual({ ms: 1500 });
  });

  it('refuses zero, fractions of a millisecond, negatives, unitless strings and other units', () => {
    for (const value of [
      0,
      1.5,
      -1,
      '0s',
      '0.5ms',
      '1.0005s',
      '60',
      '5 min',
      '2d',
      '',
      null,
      true,
      Number.NaN,
    ]) {
      expect(parseDuration(value)).toHaveProperty('problem');
    }
  });

  it('reads every amount with up to three decimals of seconds as its milliseconds (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (ms) => {
        const seconds = (ms / 1000).toFixed(3).replace(/\.?0+$/, '');
        expect(parseDuration(`${seconds}s`)).toEqual({ ms });
        expect(parseDuration(`${ms}ms`)).toEqual({ ms });
      }),
    );
  });
});

describe('parseDuration, read exactly', () => {
  it('refuses digits a double would round to whole milliseconds, instead of rounding them', () => {
    for (const value of [
      '1.00000000000000001s',
      '1000.00000000000001ms',
      '0.99999999999999999s',
      '2.0000000000000000001m',
    ])
      expect(parseDuration(value)).toEqual({
        problem: `duration ${JSON.stringify(value)} is finer than a millisecond`,
      });
    // Trailing zeros are the same number: still whole milliseconds.
    expect(parseDuration('1.000000000000000000000s')).toEqual({ ms: 1000 });
  });

  it('takes a decimal amount exactly when it comes to whole milliseconds, whatever its length (generated)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.stringMatching(/^[0-9]{1,25}$/),
        fc.constantFrom('ms', 's', 'm', 'h'),
        (whole, fraction, unit) => {
          const factor = { ms: 1n, s: 1_000n, m: 60_000n, h: 3_600_000n }[unit] as bigint;
          const scaled = BigInt(`${whole}${fraction}`) * factor;
          const divisor = 10n ** BigInt(fraction.length);
          const parsed = parseDuration(`${whole}.${fraction}${unit}`);
          if (scaled % divisor !== 0n)
            expect(parsed).toEqual({ problem: expect.stringMatching(/finer than a millisecond/) });
          else if (scaled === 0n) expect(parsed).toHaveProperty('problem');
          else if (scaled / divisor > BigInt(MAX_DURATION_MS)) expect(parsed).toHaveProperty('problem');
          else expect(parsed).toEqual({ ms: Number(scaled / divisor) });
        },
      ),
    );
  });
});

describe('formatDuration', () => {
  it('prints durations the way people read them', () => {
    expect(formatDuration(0.3)).toBe('0.3 ms');
    expect(formatDuration(3)).toBe('3 ms');
    expect(formatDuration(42.04)).toBe('42 ms');
    expect(formatDuration(250)).toBe('250 ms');
    expect(formatDuration(35_733)).toBe('35.7 s');
    expect(formatDuration(60_000)).toBe('1 min');
    expect(formatDuration(296_000)).toBe('4 min 56 s');
    expect(formatDuration(7_500_000)).toBe('2 h 5 min');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
    expect(formatDuration(-5)).toBe('0 ms');
  });

  it('never prints a unit twice, a zero part, or a number as large as the next unit (generated)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.05, max: 1e10, noNaN: true }), (ms) => {
        const text = formatDuration(ms);
        expect(text).toMatch(/^\d+(\.\d)? (ms|s|min|h|d)( \d+ (s|min|h))?$/);
        const [first, unit] = text.split(' ');
        const limits: Record<string, number> = { ms: 1000, s: 60, min: 60, h: 24, d: Infinity };
        expect(Number(first)).toBeLessThan(limits[unit as string] as number);
        expect(text).not.toMatch(/ 0 /);
      }),
    );
  });
});

describe('the longest duration', () => {
  it('refuses any duration a timer cannot hold (over 2^31 − 1 ms), in every form', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_DURATION_MS + 1, max: Number.MAX_SAFE_INTEGER }), (ms) => {
        for (const form of [ms, `${ms}ms`]) {
          const parsed = parseDuration(form);
          expect(parsed).toHaveProperty('problem');
          expect((parsed as { problem: string }).problem).toMatch(/longest a timer can hold/);
        }
      }),
    );
    expect(parseDuration(MAX_DURATION_MS)).toEqual({ ms: MAX_DURATION_MS });
    expect(parseDuration('596h')).toEqual({ ms: 596 * 3_600_000 });
    expect(parseDuration('597h')).toHaveProperty('problem');
  });
});
