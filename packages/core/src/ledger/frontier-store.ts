// Rebuilding a ledger's Merkle frontier when it is opened, and saving it at each checkpoint so
// that reopening a large log reads only the leaves appended since the last checkpoint.
import { CallgateError } from '@callgate/protocol';
import type { CheckpointRow, Store } from '../store/store.js';
import { decodeHash, encodeBase64 } from './base64.js';
import { CompactRange } from './merkle.js';

/** Store meta key of the saved frontier: JSON `{ size, hashes: base64[] }`. */
export const FRONTIER_META_KEY = 'ledger:frontier';
/** How many leaf hashes are read from a store at a time. */
export const LEAF_CHUNK = 65_536;

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);

async function savedFrontier(store: Store, size: number): Promise<CompactRange | undefined> {
  const text = await store.getMeta(FRONTIER_META_KEY);
  if (text === undefined) return undefined;
  try {
    const saved = JSON.parse(text) as { size: number; hashes: string[] };
    if (!(saved.size <= size)) return undefined;
    const hashes = saved.hashes.map(decodeHash);
    if (hashes.some((hash) => hash === undefined)) return undefined;
    const range = new CompactRange(saved.size, hashes as Uint8Array[]);
    // Trust the saved frontier only when a checkpoint of that size vouches for it.
    const [checkpoint] = await store.listCheckpoints(saved.size, saved.size);
    return checkpoint !== undefined && sameBytes(range.root(), checkpoint.root) ? range : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The frontier of the store's `size` records: from the saved frontier when a checkpoint vouches
 * for it, then the leaf hashes after it (all of them otherwise), checked against the latest
 * checkpoint on the way.
 * @throws CallgateError `ledger-invalid` when the store lost records a checkpoint covers, or its
 *   leaf hashes do not give the root the latest checkpoint signed.
 */
export async function restoreFrontier(
  store: Store,
  size: number,
  latest: CheckpointRow | undefined,
): Promise<CompactRange> {
  if (latest !== undefined && latest.size > size) {
    throw new CallgateError(
      'ledger-invalid',
      `the store holds ${size} records but a checkpoint of ${latest.size} was signed: records were lost`,
    );
  }
  const range = (await savedFrontier(store, size)) ?? new CompactRange();
  const check = latest !== undefined && latest.size > range.size ? latest : undefined;
  const mismatch = () =>
    new CallgateError(
      'ledger-invalid',
      `the store's first ${check?.size} leaf hashes do not give the root of the checkpoint of that size`,
    );
  for (let from = range.size; from < size; from += LEAF_CHUNK) {
    const to = Math.min(size, from + LEAF_CHUNK);
    const leaves = await store.readLeafHashes(from, to);
    if (leaves.length !== to - from)
      throw new CallgateError(
        'ledger-invalid',
        `the store returned ${leaves.length} leaf hashes for [${from}, ${to})`,
      );
    for (const leaf of leaves) {
      range.append(leaf);
      if (check !== undefined && range.size === check.size && !sameBytes(range.root(), check.root))
        throw mismatch();
    }
  }
  return range;
}

/** Saves `range` under {@link FRONTIER_META_KEY}. */
export async function saveFrontier(store: Store, size: number, hashes: readonly Uint8Array[]): Promise<void> {
  await store.setMeta(FRONTIER_META_KEY, JSON.stringify({ size, hashes: hashes.map(encodeBase64) }));
}
