// `callgate log-key show` (the verifier key a reader pins) and `callgate log-key rotate` (move the
// log to a new key, signed over by the old one).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KEY_ROTATIONS_META_KEY, keyToPin, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { openDataDir, rotateLogKey } from '@callgate/store-sqlite';
import { requireDataDir } from './data-folder.js';

/**
 * Prints the verifier key (C2SP note key `name+id+key`) to give `callgate verify --public-key` for
 * the data folder's log: its key, or after `callgate log-key rotate` the key it had before its
 * first rotation (bundles carry the rotation statements, and the verifier follows them from the
 * pinned key), then `warn`s of the current key (standard error; so do its refusals). Reads only: it works beside a running server.
 *
 * @returns 0, or 1 when the folder holds no log yet (nothing was ever served or recorded there).
 * @throws CallgateError `request-invalid` when `dataDir` holds no callgate data (exit code 2).
 */
export async function runLogKeyShow(
  dataDir: string,
  print: (line: string) => void,
  warn: (line: string) => void,
): Promise<number> {
  requireDataDir(dataDir);
  if (!existsSync(join(dataDir, 'log-key.json'))) {
    warn(
      `callgate log-key show: no log in ${dataDir} yet (callgate serve or callgate demo makes one); pass --data DIR or set CALLGATE_DATA`,
    );
    return 1;
  }
  const { store, logKey } = openDataDir(dataDir);
  try {
    const origin = await store.getMeta('ledger:origin');
    if (!origin) {
      warn(`callgate log-key show: the log in ${dataDir} has not been opened yet: start callgate serve once`);
      return 1;
    }
    const current = logSignerFromPrivateKey(origin, logKey.privateKey).verifierKey;
    const rotations = await store.getMeta(KEY_ROTATIONS_META_KEY);
    const statements = rotations === undefined ? [] : (JSON.parse(rotations) as string[]);
    // Bundles carry the rotations, followed from the pinned key: the key to pin is the chain's first.
    const pin = keyToPin(current, statements);
    print(pin);
    if (pin !== current)
      warn(
        `callgate log-key show: the log was rotated ${statements.length === 1 ? 'once' : `${statements.length} times`} and now signs with ${current}; its bundles carry the rotations, which a verifier pinning the key above follows`,
      );
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * Moves the data folder's log to a new signing key, the change signed by the old key, and prints
 * both keys and which one to keep pinning.
 * @returns 0.
 * @throws CallgateError `request-invalid` when `dataDir` holds no callgate data (exit code 2), or
 *   the folder's refusals (a server running on it).
 */
export async function runLogKeyRotate(dataDir: string, print: (line: string) => void): Promise<number> {
  requireDataDir(dataDir);
  const rotated = await rotateLogKey(dataDir);
  print(`rotated at log size ${rotated.size}`);
  print(`  old key  ${rotated.oldKey}`);
  print(`  new key  ${rotated.newKey}`);
  print(
    '  keep pinning the key callgate log-key show prints (the key before the first rotation): bundles carry the rotations, and the verifier follows them from it',
  );
  return 0;
}
