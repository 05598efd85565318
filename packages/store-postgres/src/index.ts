// @callgate/store-postgres: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export { PostgresApprovalChannel } from './approval-channel.js';
export type { PostgresStoreOptions } from './database.js';
export { PostgresStore } from './postgres-store.js';
export { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
export { PostgresSequencer } from './sequencer.js';
export type { StoredUiSession } from './session-backing.js';
export { PostgresSessionBacking } from './session-backing.js';
export type { SharedEngine, SharedEngineOptions } from './shared-engine.js';
export { openSharedEngine, readLogKeyFile } from './shared-engine.js';
