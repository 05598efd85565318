import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { truncateText } from './text.js';

describe('truncateText', () => {
  it('never cuts inside a surrogate pair', () => {
    expect(truncateText('ab\uD83D\uDE00cd', 3, '…')).toBe('ab…');
    expect(truncateText('ab\uD83D\uDE00cd', 4, '…')).toBe('ab\uD83D\uDE00…');
    expect(truncateText('short', 10, '…')).toBe('short');
  });

  it('keeps well-formed text well-formed, as a prefix, within the limit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(40), (text, limit) => {
        const cut = truncateText(text, limit);
        expect(cut.length).toBeLessThanOrEqual(limit);
        expect(text.startsWith(cut)).toBe(true);
        expect((cut as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
      }),
      { seed: 10, numRuns: 500 },
    );
  });
});
