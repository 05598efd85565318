// JSON Schema `uniqueItems` in linear time. Ajv's own keyword compares every pair of items with a
// deep equality when the items are objects or arrays (or of no declared type): O(n²) on the event
// loop, so one agent-registered schema and a 1 MiB array of small objects blocked the server for
// tens of seconds. Two JSON values are equal in the JSON Schema sense (draft 2020-12 §4.2.2: same
// type, equal numbers, same members regardless of order) exactly when their RFC 8785 canonical
// forms are the same string, so one canonical text per item and a Map find any repeat in one pass.
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import { fastCanonicalJson } from '../json/canonical.js';

type UniqueItemsValidator = ((schema: boolean, data: unknown) => boolean) & {
  errors?: Partial<ErrorObject>[];
};

const validateUniqueItems: UniqueItemsValidator = (schema, data) => {
  validateUniqueItems.errors = undefined;
  if (schema !== true || !Array.isArray(data) || data.length < 2) return true;
  const seen = new Map<string, number>();
  for (let index = 0; index < data.length; index += 1) {
    const text = fastCanonicalJson(data[index]);
    const earlier = seen.get(text);
    if (earlier !== undefined) {
      validateUniqueItems.errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${earlier} and ${index} are identical)`,
          params: { i: index, j: earlier },
        },
      ];
      return false;
    }
    seen.set(text, index);
  }
  return true;
};

/** Replaces `ajv`'s `uniqueItems` with the linear-time check above; returns `ajv`. */
export function withLinearUniqueItems(ajv: Ajv2020): Ajv2020 {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    errors: true,
    validate: validateUniqueItems,
  });
  return ajv;
}
