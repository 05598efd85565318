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
});
