// Each public name of @callgate/core lives in one entry point: the gate, /ledger, /adapter,
// /crypto or /json. A name exported by two would be two places to look for one thing.
import { describe, expect, it } from 'vitest';
import * as gate from '../index.js';
import * as adapter from './adapter.js';
import * as crypto from './crypto.js';
import * as json from './json.js';
import * as ledger from './ledger.js';

describe("@callgate/core's entry points", () => {
  it('share no name', () => {
    const entries = {
      '.': gate,
      './ledger': ledger,
      './adapter': adapter,
      './crypto': crypto,
      './json': json,
    };
    const where = new Map<string, string[]>();
    for (const [entry, names] of Object.entries(entries))
      for (const name of Object.keys(names)) where.set(name, [...(where.get(name) ?? []), entry]);
    expect([...where].filter(([, entries]) => entries.length > 1)).toEqual([]);
  });
});
