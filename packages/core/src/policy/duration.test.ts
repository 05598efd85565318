import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it('reads units and bare milliseconds', () => {
    expect(parseDuration('500ms')).toEqual({ ms: 500 });
    expect(parseDuration('60s')).toEqual({ ms: 60_000 });
    expect(parseDuration('5m')).toEqual({ ms: 300_000 });
    expect(parseDuration('1h')).toEqual({ ms: 3_600_000 });
    expect(parseDuration(1500)).toEqual({ ms: 1500 });
  });

  it('refuses zero, fractions, negatives, unitless strings and other units', () => {
    for (const value of [0, 1.5, -1, '0s', '1.5s', '60', '5 min', '2d', '', null, true, Number.NaN]) {
      expect(parseDuration(value)).toHaveProperty('problem');
    }
  });
});
