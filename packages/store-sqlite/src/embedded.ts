import { type ApprovalPort, Engine, type Logger, type Policy, type ToolSpec } from '@callgate/core';
import { randomBytes } from '@callgate/core/crypto';
import { Ledger, type LogSigner, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { openDataDir } from './data-dir.js';
import type { SqliteStore } from './sqlite-store.js';
import { acquireWriterLock, type WriterLock } from './writer-lock.js';

/** An engine on the embedded default: SQLite and the log key in one data folder. */
export interface EmbeddedEngine {
  engine: Engine;
  store: SqliteStore;
  ledger: Ledger;
  origin: string;
  verifierKey: string;
  close(): Promise<void>;
}

/** Options of {@link openEmbedded}. */
export interface EmbeddedOptions {
  dataDir: string;
  policy: Policy;
  tools?: ToolSpec[];
  approvalPorts?: ApprovalPort[];
  synchronous?: 'NORMAL' | 'FULL';
  vault?: boolean;
  logger?: Logger;
  /** Start a new log beside a log key that has none (see {@link openDataDir}). */
  init?: boolean;
}

/** A data folder's store and ledger, with its writer lock. `close()` closes all three. */
export interface EmbeddedLedger {
  store: SqliteStore;
  ledger: Ledger;
  lock: WriterLock;
  close(): Promise<void>;
  /** The log's origin (C2SP checkpoint origin line), made once per data folder and kept. */
  origin: string;
  signer: LogSigner;
}

/**
 * Opens (or creates) the ledger of a data folder: the SQLite store, the log key and the log's
 * origin (`callgate.local/log/<12 hex>`, made on first open and kept in the store). Takes the
 * folder's writer lock first: one process writes a log at a time.
 *
 * @throws CallgateError `conflict` when another live process holds the data folder;
 *   `ledger-invalid` for a damaged database or a log key that does not belong to its log.
 */
export async function openLedger(
  dataDir: string,
  synchronous?: 'NORMAL' | 'FULL',
  purpose = `callgate (${process.argv.slice(2, 3).join(' ') || 'library'})`,
  options: { init?: boolean } = {},
): Promise<EmbeddedLedger> {
  const { store, logKey } = openDataDir(dataDir, {
    ...(synchronous ? { synchronous } : {}),
    ...(options.init ? { init: true } : {}),
  });
  let lock: WriterLock;
  try {
    lock = acquireWriterLock(dataDir, purpose);
  } catch (error) {
    await store.close();
    throw error;
  }
  try {
    let origin = await store.getMeta('ledger:origin');
    if (!origin) origin = `callgate.local/log/${randomBytes(6).toString('hex')}`;
    const signer = logSignerFromPrivateKey(origin, logKey.privateKey);
    const ledger = await Ledger.open(store, { signer, origin });
    return {
      store,
      ledger,
      lock,
      origin,
      signer,
      async close() {
        try {
          await ledger.close();
          await store.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    lock.release();
    await store.close();
    throw error;
  }
}

/** Opens an engine on a data folder (SQLite in `<dataDir>/callgate.db`, the log key beside it). */
export async function openEmbedded(options: EmbeddedOptions): Promise<EmbeddedEngine> {
  const { store, ledger, origin, signer, lock } = await openLedger(
    options.dataDir,
    options.synchronous,
    undefined,
    options.init ? { init: true } : {},
  );
  const engine = new Engine({
    store,
    ledger,
    policy: options.policy,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.approvalPorts ? { approvalPorts: options.approvalPorts } : {}),
    ...(options.vault !== undefined ? { vault: options.vault } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    engine,
    store,
    ledger,
    origin,
    verifierKey: signer.verifierKey,
    async close() {
      try {
        await engine.close();
        await store.close();
      } finally {
        lock.release();
      }
    },
  };
}
