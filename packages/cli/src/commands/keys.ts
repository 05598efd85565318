import { isCallgateError, type Store } from '@callgate/core';
import { type ApiKeyRole, createApiKey, revokeApiKey } from '@callgate/server';
import { PostgresStore } from '@callgate/store-postgres';
import { openDataDir } from '@callgate/store-sqlite';
import { exitCodeOfKind } from '../exit-codes.js';
import { requireDataDir } from './data-folder.js';

type Print = (line: string) => void;

/** A `postgres://` URL names a shared store; anything else is a data folder. */
const isStoreUrl = (where: string) => /^postgres(ql)?:\/\//.test(where);

async function withStore<T>(
  dataDir: string,
  action: (store: Store) => Promise<T>,
  options: { create?: boolean } = {},
): Promise<T> {
  // Listing or revoking in a folder with no database (a mistyped --data) would make a new, empty
  // log there and report that it has no keys: refused instead, naming the folder.
  if (!isStoreUrl(dataDir) && !options.create) requireDataDir(dataDir);
  const store: Store = isStoreUrl(dataDir)
    ? await PostgresStore.open({ url: dataDir })
    : openDataDir(dataDir).store;
  try {
    return await action(store);
  } finally {
    await store.close();
  }
}

/**
 * `callgate keys create --role R [--name N]`: creates an API key in the data folder and prints
 * it once (only its SHA-256 is stored). Works while a server runs on the same folder.
 */
export async function runKeysCreate(
  dataDir: string,
  options: { role: ApiKeyRole; name?: string; print: Print; warn: Print },
): Promise<number> {
  return withStore(
    dataDir,
    async (store) => {
      try {
        const { key, row } = await createApiKey(store, {
          role: options.role,
          ...(options.name ? { name: options.name } : {}),
        });
        options.print(`created ${row.role} key "${row.name}" in ${dataDir}`);
        options.print('');
        options.print(`  ${key}`);
        options.print('');
        options.print('This is the only time the key is shown; callgate keeps only its hash. Use it as');
        options.print(`  Authorization: Bearer ${key.slice(0, 7)}…   (or CALLGATE_API_KEY for the CLI)`);
        return 0;
      } catch (error) {
        if (!isCallgateError(error)) throw error;
        options.warn(`callgate keys create: ${error.message}`);
        return exitCodeOfKind(error.kind);
      }
    },
    { create: true },
  );
}

/** `callgate keys list`: every key's name, role and dates (never the key). */
export async function runKeysList(dataDir: string, options: { print: Print }): Promise<number> {
  return withStore(dataDir, async (store) => {
    const keys = await store.listApiKeys();
    if (keys.length === 0) options.print('no API keys; create one with: callgate keys create --role admin');
    for (const key of keys) {
      const state =
        key.revoked_at === undefined ? 'live' : `revoked ${new Date(key.revoked_at).toISOString()}`;
      options.print(
        `${key.name.padEnd(24)} ${key.role.padEnd(9)} created ${new Date(key.created_at).toISOString()}  ${state}`,
      );
    }
    return 0;
  });
}

/**
 * `callgate keys revoke NAME`: the key stops working at once (its sessions end too). The last live
 * admin key is kept, as `DELETE /v1/keys/NAME` keeps it (`revokeApiKey`).
 * @returns 0 when revoked; 1 when no live key has that name or it is the last admin key.
 */
export async function runKeysRevoke(
  dataDir: string,
  name: string,
  options: { print: Print; warn: Print },
): Promise<number> {
  return withStore(dataDir, async (store) => {
    try {
      await revokeApiKey(store, name, Date.now());
    } catch (error) {
      if (!isCallgateError(error)) throw error;
      options.warn(`callgate keys revoke: ${error.message}`);
      return exitCodeOfKind(error.kind);
    }
    options.print(`revoked ${name}`);
    return 0;
  });
}
