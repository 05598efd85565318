// @callgate/store-postgres: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { PostgresStoreOptions } from './database.js';
export { PostgresStore } from './postgres-store.js';
export { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
export { PostgresSequencer } from './sequencer.js';
