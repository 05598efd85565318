// `callgate log-key rotate`: the data folder's log moves to a new key, with a statement the old
// key signs (see core's signKeyRotation), so verifiers that pin the old key follow the change.
import { closeSync, fsyncSync, linkSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { KEY_ROTATIONS_META_KEY, logSignerFromPrivateKey, signKeyRotation } from '@callgate/core/ledger';
import { LOG_PUBLIC_KEY_META } from './continuity.js';
import { openLedger } from './embedded.js';

function writeKeyFile(path: string, seed: Uint8Array): void {
  const descriptor = openSync(path, 'wx', 0o600);
  try {
    writeSync(
      descriptor,
      `${JSON.stringify({ v: 1, algorithm: 'ed25519', private_key: Buffer.from(seed).toString('base64url') })}\n`,
    );
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Rotates the log key of `dataDir` (the server must be stopped: this takes the writer lock):
 * signs a checkpoint with the old key, records the rotation statement (signed by the old and the
 * new key) at the log's size, binds the log to the new key, and replaces `log-key.json` (the old
 * file is kept as `log-key.retired-<key id>.json`). From then on checkpoints are signed by the new
 * key; bundles carry the statements in `key_rotations`.
 *
 * If it stops between binding and replacing the file, the next start refuses, naming the new key;
 * it is in `log-key.next.json`.
 * @returns the old and new verifier keys and the log size of the rotation.
 */
export async function rotateLogKey(
  dataDir: string,
): Promise<{ oldKey: string; newKey: string; size: number }> {
  const opened = await openLedger(dataDir, undefined, 'callgate log-key rotate');
  const next = join(dataDir, 'log-key.next.json');
  let result: { oldKey: string; newKey: string; size: number; retired: string };
  try {
    await opened.ledger.checkpoint();
    const size = opened.ledger.size;
    const keyPair = generateEd25519KeyPair();
    const newSigner = logSignerFromPrivateKey(opened.origin, keyPair.privateKey);
    const statement = signKeyRotation(opened.signer, newSigner, size);
    writeKeyFile(next, keyPair.privateKey);
    const known = JSON.parse((await opened.store.getMeta(KEY_ROTATIONS_META_KEY)) ?? '[]') as string[];
    await opened.store.setMeta(KEY_ROTATIONS_META_KEY, JSON.stringify([...known, statement]));
    await opened.store.setMeta(LOG_PUBLIC_KEY_META, Buffer.from(keyPair.publicKey).toString('base64url'));
    const retired = join(dataDir, `log-key.retired-${Buffer.from(opened.signer.keyId).toString('hex')}.json`);
    result = { oldKey: opened.signer.verifierKey, newKey: newSigner.verifierKey, size, retired };
  } finally {
    await opened.close();
  }
  const current = join(dataDir, 'log-key.json');
  linkSync(current, result.retired);
  renameSync(next, current);
  return { oldKey: result.oldKey, newKey: result.newKey, size: result.size };
}
