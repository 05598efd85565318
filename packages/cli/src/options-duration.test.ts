// A duration option quotes the value as given: digits a double does not hold are never shown as
// the double they round to.
import { describe, expect, it } from 'vitest';
import { duration } from './options.js';

describe('duration', () => {
  it('quotes a number of milliseconds as written, never the double it rounds to', () => {
    for (const given of ['99999999999999999999', '12345678901234567890', '9007199254740993']) {
      let message = '';
      try {
        duration(given);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(`duration ${given} is longer than the longest a timer can hold`);
      expect(message).not.toContain(String(Number(given)));
    }
  });

  it('refuses an amount finer than a millisecond however many digits it has, naming it once', () => {
    for (const given of ['1000.00000000000001ms', '1.00000000000000001s', '0.5ms']) {
      expect(() => duration(given)).toThrow(
        `expected a duration such as 300ms, 30s or 5m: duration ${JSON.stringify(given)} is finer than a millisecond`,
      );
    }
    // Text that is no duration at all: what was expected, said once.
    expect(() => duration('abc')).toThrow(
      /^expected a duration such as 300ms, 30s, 5m or whole milliseconds \(500\)$/,
    );
  });
});
