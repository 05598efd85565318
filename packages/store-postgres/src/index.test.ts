import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/store-postgres public API', () => {
  it('exports exactly the pinned names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "MIGRATIONS",
        "PostgresApprovalChannel",
        "PostgresSequencer",
        "PostgresSessionBacking",
        "PostgresStore",
        "SCHEMA_VERSION",
        "openSharedEngine",
        "readLogKeyFile",
      ]
    `);
  });
});
