import { describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, testPostgresUrl } from '../../../test/postgres/database.js';
import { describeStoreContract } from '../../../test/store-contract/store-contract.js';
import { PostgresStore } from './postgres-store.js';

const url = testPostgresUrl();

describe.skipIf(url === undefined)('PostgresStore', () => {
  describeStoreContract(
    'PostgresStore',
    async () => PostgresStore.open({ url: url as string, schema: freshSchema() }),
    async (store) => dropSchema(url as string, (store as PostgresStore).schema),
  );
});

describe.skipIf(url === undefined)('PostgresStore durability', () => {
  it('reports FULL by default and NORMAL when the URL turns synchronous_commit off', async () => {
    const schema = freshSchema();
    const full = await PostgresStore.open({ url: url as string, schema });
    expect(full.synchronous).toBe('FULL');
    await full.close();
    const relaxed = new URL(url as string);
    relaxed.searchParams.set('options', '-c synchronous_commit=off');
    const normal = await PostgresStore.open({ url: relaxed.toString(), schema });
    try {
      expect(normal.synchronous).toBe('NORMAL');
      await normal.setMeta('k', 'v');
      expect(await normal.getMeta('k')).toBe('v');
    } finally {
      await normal.close();
      await dropSchema(url as string, schema);
    }
  });
});
