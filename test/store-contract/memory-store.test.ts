import { MemoryStore } from '@callgate/core';
import { describeStoreContract } from './store-contract.js';

describeStoreContract('MemoryStore', async () => new MemoryStore());
