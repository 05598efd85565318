// @callgate/store-sqlite: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { DataDir, DataDirOptions } from './data-dir.js';
export { openDataDir } from './data-dir.js';
export type { SqliteStoreOptions } from './database.js';
export type { EmbeddedEngine, EmbeddedLedger, EmbeddedOptions } from './embedded.js';
export { openEmbedded, openLedger } from './embedded.js';
export type { LogKey } from './log-key.js';
export { loadOrCreateLogKey } from './log-key.js';
export { rotateLogKey } from './rotate-key.js';
export { SqliteStore } from './sqlite-store.js';
export type { WriterLock } from './writer-lock.js';
export { acquireWriterLock, WRITER_LOCK_FILE } from './writer-lock.js';
