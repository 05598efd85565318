import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/store-sqlite public API', () => {
  it('exports exactly the pinned names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "SqliteStore",
        "WRITER_LOCK_FILE",
        "acquireWriterLock",
        "loadOrCreateLogKey",
        "openDataDir",
        "openEmbedded",
        "openLedger",
        "rotateLogKey",
      ]
    `);
  });
});
