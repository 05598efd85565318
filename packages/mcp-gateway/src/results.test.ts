import { describe, expect, it } from 'vitest';
import { paginate } from './pagination.js';
import { errorResult, jsonEncodedArguments } from './results.js';

describe('errorResult', () => {
  it('carries the error body as text and as structured content', () => {
    const result = errorResult({ kind: 'policy-denied', message: 'no', rules: ['r1'] });
    expect(result).toEqual({
      content: [{ type: 'text', text: '{"error":{"kind":"policy-denied","message":"no","rules":["r1"]}}' }],
      structuredContent: { error: { kind: 'policy-denied', message: 'no', rules: ['r1'] } },
      isError: true,
    });
    expect(errorResult({ kind: 'tool-error', message: 'x' }, { structured: false })).not.toHaveProperty(
      'structuredContent',
    );
  });
});

describe('jsonEncodedArguments', () => {
  const schema = {
    type: 'object',
    properties: {
      options: { type: 'object' },
      paths: { type: 'array' },
      text: { type: 'string' },
      either: { type: ['object', 'string'] },
      nested: { type: 'object', properties: { inner: { type: 'array' } } },
    },
  };

  it('names values sent as JSON text where an object or array is wanted', () => {
    expect(
      jsonEncodedArguments(schema, {
        options: '{"a":1}',
        paths: ' ["x"]',
        text: '{"fine":true}',
        either: '{"fine":true}',
        nested: { inner: '[1,2]' },
      }),
    ).toEqual([
      'arguments.options arrived as a JSON-encoded string, but the schema wants an object: send the value itself, not its JSON text',
      'arguments.paths arrived as a JSON-encoded string, but the schema wants an array: send the value itself, not its JSON text',
      'arguments.nested.inner arrived as a JSON-encoded string, but the schema wants an array: send the value itself, not its JSON text',
    ]);
    expect(jsonEncodedArguments(schema, { options: 'not json', paths: ['x'] })).toEqual([]);
  });
});

describe('paginate', () => {
  it('pages with opaque cursors and refuses foreign ones', () => {
    const items = Array.from({ length: 5 }, (_, index) => index);
    const first = paginate(items, undefined, 2);
    expect(first.page).toEqual([0, 1]);
    const second = paginate(items, first.nextCursor, 2);
    expect(second.page).toEqual([2, 3]);
    const last = paginate(items, second.nextCursor, 2);
    expect(last).toEqual({ page: [4] });
    expect(() => paginate(items, 'bogus', 2)).toThrow(/invalid cursor/);
    expect(() => paginate(items, 'cg1.!!!', 2)).toThrow(/invalid cursor/);
  });
});
