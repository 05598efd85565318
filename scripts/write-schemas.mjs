// Writes the protocol's JSON Schemas and the HTTP API's OpenAPI 3.1 document (`openapi.json`)
// to test/fixtures/schemas/ (run after a protocol or route change: `npm run schemas`).
// Tests in both languages read these files; both are generated from the zod schemas in
// @callgate/protocol, never edited by hand.
import { mkdirSync, writeFileSync } from 'node:fs';
import {
  Engine,
  generateEd25519KeyPair,
  Ledger,
  loadPolicy,
  logSignerFromPrivateKey,
  MemoryStore,
} from '@callgate/core';
import { protocolJsonSchemas } from '@callgate/protocol';
import { createApp, DENY_ALL_POLICY_TEXT } from '@callgate/server';

const dir = new URL('../test/fixtures/schemas/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(protocolJsonSchemas())) {
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify(schema, null, 2)}\n`);
}

// The document the server serves at GET /v1/openapi.json, from its route table.
const store = new MemoryStore();
const origin = 'openapi.local/schemas';
const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
const ledger = await Ledger.open(store, { signer, origin });
const engine = new Engine({
  store,
  ledger,
  policy: loadPolicy(DENY_ALL_POLICY_TEXT, { source: 'deny-all' }),
});
const app = createApp({ engine, publicKey: signer.verifierKey });
const document = await (await app.request('/v1/openapi.json')).json();
writeFileSync(new URL('openapi.json', dir), `${JSON.stringify(document, null, 2)}\n`);
await engine.close?.();
