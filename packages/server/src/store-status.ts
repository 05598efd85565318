import type { Store, StoreStatus } from '@callgate/core';

/**
 * The store's part of `/v1/health`: `{status: 'ok'}`, or `{status: 'unavailable', reason, since}`
 * while its writes fail (disk full, I/O error; see `Store.status`). A store without a status is ok.
 */
export async function storeHealth(store: Store): Promise<StoreStatus> {
  if (!store.status) return { status: 'ok' };
  try {
    return await store.status();
  } catch (error) {
    return {
      status: 'unavailable',
      reason: error instanceof Error ? error.message : String(error),
      since: Date.now(),
    };
  }
}
