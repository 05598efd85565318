import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttemptMap } from './attempts.js';

describe('AttemptMap', () => {
  it('holds what a map keyed by (call id, attempt) holds, values in call then attempt order', () => {
    const operation = fc.record({
      call: fc.constantFrom('a', 'b', 'c', '__proto__', ''),
      attempt: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(1)),
      write: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        const map = new AttemptMap<{ n: number }>();
        const reference = new Map<string, Map<number, { n: number }>>();
        const latest = new Map<string, { n: number }>();
        operations.forEach(({ call, attempt, write }, n) => {
          if (write) {
            const value = { n };
            expect(map.set(call, attempt, value)).toBe(reference.get(call)?.get(attempt));
            if (!reference.has(call)) reference.set(call, new Map());
            reference.get(call)?.set(attempt, value);
            latest.set(call, value);
          }
          expect(map.latest(call)).toBe(latest.get(call));
          const expected = reference.get(call)?.get(attempt);
          expect(map.get(call, attempt)).toBe(expected);
          expect(map.has(call, attempt)).toBe(expected !== undefined);
        });
        const ordered = [...reference.values()].flatMap((attempts) =>
          [...attempts.entries()].sort(([a], [b]) => a - b).map(([, value]) => value),
        );
        expect([...map.values()]).toEqual(ordered);
      }),
      { numRuns: 2000 },
    );
  });
});
