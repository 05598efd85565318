// The contract every callgate Store must honour, as a vitest suite. A store's own test file
// calls describeStoreContract with a factory; the suite gives each test a fresh, empty store.
import type { Store } from '@callgate/core';
import { afterEach, beforeEach, describe } from 'vitest';
import { apiKeysContract } from './contract-api-keys.js';
import { approvalsContract } from './contract-approvals.js';
import { grantsContract } from './contract-grants.js';
import { ledgerContract } from './contract-ledger.js';
import { runsAndCallsContract } from './contract-runs.js';
import { settingsContract } from './contract-settings.js';

/** Returns the store of the running test. */
export type CurrentStore = () => Store;

/**
 * Registers the Store contract suite under `Store contract: <name>`.
 *
 * @param makeStore makes a new, empty store; called before each test.
 * @param cleanup called after each test, after the store was closed (e.g. to remove its files).
 */
export function describeStoreContract(
  name: string,
  makeStore: () => Promise<Store>,
  cleanup?: (store: Store) => Promise<void> | void,
): void {
  describe(`Store contract: ${name}`, () => {
    let current: Store | undefined;
    const store: CurrentStore = () => {
      if (!current) throw new Error('no store: the contract suite makes one before each test');
      return current;
    };
    beforeEach(async () => {
      current = await makeStore();
    });
    afterEach(async () => {
      const finished = current;
      current = undefined;
      if (!finished) return;
      await finished.close();
      await cleanup?.(finished);
    });

    describe('runs and calls', () => runsAndCallsContract(store));
    describe('approvals', () => approvalsContract(store));
    describe('grants', () => grantsContract(store));
    describe('ledger', () => ledgerContract(store));
    describe('idempotency keys, checkpoints, openings, meta', () => settingsContract(store));
    describe('API keys', () => apiKeysContract(store));
  });
}
