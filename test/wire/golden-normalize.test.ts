// Golden normalisation markers: what callgate-normalize/1 and /2 committed once for values read
// losslessly from a client's JSON text must stay byte for byte what today's code commits, and
// today's marker check must accept them. A failure here means the rule changed: make the change
// a new version instead.
import { readFileSync } from 'node:fs';
import { parseJsonLossless } from '@callgate/core';
import { canonicalJson } from '@callgate/core/crypto';
import { isNormalizedMarker, recordable } from '@callgate/core/json';
import { describe, expect, it } from 'vitest';

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/wire/normalize-v2.json', import.meta.url), 'utf8'),
) as { cases: Array<{ raw: string; marker: Record<string, unknown> }> };

describe('golden callgate-normalize/1 and /2 markers', () => {
  it.each(golden.cases.map((entry) => [entry.raw, entry.marker] as const))(
    'commits %s as the golden marker',
    (raw, marker) => {
      expect(isNormalizedMarker(marker)).toBe(true);
      const { value, reasons } = recordable(parseJsonLossless(raw));
      expect(canonicalJson(value)).toBe(canonicalJson(marker));
      expect(reasons).toEqual(marker.reasons);
    },
  );

  it('holds a marker of each version', () => {
    expect(new Set(golden.cases.map((entry) => entry.marker.rule))).toEqual(
      new Set(['callgate-normalize/1', 'callgate-normalize/2']),
    );
  });
});
