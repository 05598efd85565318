// The record checks get, for a file line the no-object reader is certain of, only the fields it
// hands over (HANDED_OVER_FIELDS); a check that read another would see `undefined` there, and so
// could pass what the parsed record fails. This holds every check of a file's verification to
// that list, and its report to the report of the same file read through JSON.parse.
import { buildBundleFixture } from '@callgate/testing';
import { describe, expect, it, vi } from 'vitest';
import { serializeBundle } from '../bundle-text.js';
import * as reader from '../record-line-reader.js';
import { verifyBundleText } from './verify-bundle.js';

const reads = new Set<string>();
let handedOver = 0;

vi.mock('../record-line-reader.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../record-line-reader.js')>();
  return {
    ...original,
    readRecordLine: (...args: Parameters<typeof original.readRecordLine>) => {
      const fields = original.readRecordLine(...args);
      if (fields === undefined) return undefined;
      handedOver += 1;
      return new Proxy(fields, {
        get(target, name, receiver) {
          if (typeof name === 'string') reads.add(name);
          return Reflect.get(target, name, receiver);
        },
      });
    },
  };
});

describe('the fields the no-object reader hands the record checks', () => {
  it('are all the record checks read, and they report what they report of parsed records', async () => {
    for (const proofs of [false, true]) {
      for (const openings of [false, true]) {
        const { bundle } = await buildBundleFixture({ proofs, openings });
        const text = serializeBundle(bundle);
        const before = handedOver;
        for (const strict of [false, true]) {
          const fromBytes = verifyBundleText(Buffer.from(text, 'utf8'), { strict });
          expect(fromBytes).toEqual(verifyBundleText(text, { strict }));
        }
        expect(handedOver - before, 'lines the reader was certain of').toBe(2 * bundle.records.length);
      }
    }
    expect(reads.size).toBeGreaterThan(10);
    expect([...reads].filter((name) => !reader.HANDED_OVER_FIELDS.includes(name))).toEqual([]);
  });
});
