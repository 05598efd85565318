import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { protocolJsonSchemas } from './index.js';

const dir = new URL('../../../test/fixtures/schemas/', import.meta.url);

describe('exported JSON Schemas', () => {
  it('the files under test/fixtures/schemas match the protocol (run `npm run schemas` after a change)', () => {
    for (const [name, schema] of Object.entries(protocolJsonSchemas())) {
      const onDisk = JSON.parse(readFileSync(new URL(`${name}.json`, dir), 'utf8'));
      expect(onDisk, name).toEqual(schema);
    }
  });
});
