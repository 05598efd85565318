import { describe } from 'vitest';
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
