import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, commit, digestOf, opens } from './canonical.js';

const jsonValue = fc.jsonValue({ maxDepth: 4 }).filter((value) => !Object.is(value, -0));

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, index) => shuffleKeys(item, seed + index));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    entries.sort(
      (a, b) => ((a[0].length * 31 + seed) % 7) - ((b[0].length * 31 + seed) % 7) || (a[0] < b[0] ? 1 : -1),
    );
    return Object.fromEntries(entries.map(([key, item]) => [key, shuffleKeys(item, seed + 1)]));
  }
  return value;
}

describe('canonical JSON (RFC 8785)', () => {
  it('matches the RFC 8785 examples for numbers and key order', () => {
    expect(canonicalJson({ b: 2, a: 1, c: { z: [3, 'x'], y: null } })).toBe(
      '{"a":1,"b":2,"c":{"y":null,"z":[3,"x"]}}',
    );
    expect(canonicalJson([1e21, 1e-7, 0.000001, 100, -0])).toBe('[1e+21,1e-7,0.000001,100,0]');
    expect(canonicalJson({ '€': 1, '\r': 2, '1': 3 })).toBe('{"\\r":2,"1":3,"€":1}');
  });

  it('is stable under key order', () => {
    fc.assert(
      fc.property(jsonValue, fc.integer(), (value, seed) => {
        expect(canonicalJson(shuffleKeys(value, seed))).toBe(canonicalJson(value));
      }),
    );
  });

  it('is stable under re-serialisation', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const once = canonicalJson(value);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
    );
  });

  it('equal values give equal digests, different values different digests', () => {
    fc.assert(
      fc.property(jsonValue, jsonValue, (a, b) => {
        const same = canonicalJson(a) === canonicalJson(b);
        expect(digestOf(a) === digestOf(b)).toBe(same);
        expect(digestOf(structuredClone(a))).toBe(digestOf(a));
      }),
    );
    expect(digestOf({ a: 1 })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('refuses values with no canonical form', () => {
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(/NaN/);
    expect(() => canonicalJson('\ud800')).toThrow(/surrogate/i);
  });
});

describe('commitments', () => {
  it('open with their salt and value only', () => {
    fc.assert(
      fc.property(jsonValue, jsonValue, (value, other) => {
        const { commitment, salt } = commit(value);
        expect(opens(commitment, salt, value)).toBe(true);
        expect(opens(commitment, salt, structuredClone(value))).toBe(true);
        if (canonicalJson(other) !== canonicalJson(value)) expect(opens(commitment, salt, other)).toBe(false);
        expect(opens(commitment, Buffer.alloc(16).toString('base64url'), value)).toBe(false);
      }),
    );
  });

  it('hide equal values behind different salts', () => {
    expect(commit({ amount: 5 }).commitment).not.toBe(commit({ amount: 5 }).commitment);
  });
});
