// Writes the protocol's JSON Schemas to test/fixtures/schemas/ (run after a protocol change:
// `npm run schemas`). Tests in both languages read these files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { protocolJsonSchemas } from '@callgate/protocol';

const dir = new URL('../test/fixtures/schemas/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(protocolJsonSchemas())) {
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify(schema, null, 2)}\n`);
}
