import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { count, table } from './format.js';

describe('count', () => {
  it('uses the singular for exactly one', () => {
    expect(count(1, 'checkpoint')).toBe('1 checkpoint');
    expect(count(0, 'checkpoint')).toBe('0 checkpoints');
    expect(count(2, 'failed check')).toBe('2 failed checks');
    expect(count(3, 'entry', 'entries')).toBe('3 entries');
  });
});

describe('table', () => {
  it('starts every column at the same place on every line and never cuts a cell (generated)', () => {
    const cell = fc.string({
      minLength: 1,
      maxLength: 12,
      unit: fc.constantFrom('a', 'b', 'é', '—', '-', '1', '.'),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }).chain((columns) =>
          fc.array(fc.array(cell, { minLength: columns, maxLength: columns }), {
            minLength: 1,
            maxLength: 8,
          }),
        ),
        (rows) => {
          const lines = table(rows).split('\n');
          expect(lines).toHaveLength(rows.length);
          const starts = (row: readonly string[]) => {
            const offsets: number[] = [];
            let at = 0;
            for (const text of row) {
              offsets.push(at);
              at += [...text].length;
              at +=
                2 +
                (Math.max(...rows.map((other) => [...(other[offsets.length - 1] ?? '')].length)) -
                  [...text].length);
            }
            return offsets;
          };
          rows.forEach((row, index) => {
            const line = [...(lines[index] ?? '')];
            for (const [column, offset] of starts(row).entries()) {
              expect(line.slice(offset, offset + [...(row[column] ?? '')].length).join('')).toBe(row[column]);
            }
          });
        },
      ),
    );
  });
});
