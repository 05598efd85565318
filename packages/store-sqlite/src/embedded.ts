import {
  type ApprovalPort,
  Engine,
  Ledger,
  type Logger,
  type LogSigner,
  logSignerFromPrivateKey,
  type Policy,
  randomBytes,
  type ToolSpec,
} from '@callgate/core';
import { openDataDir } from './data-dir.js';
import type { SqliteStore } from './sqlite-store.js';

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
}

/** A data folder's store and ledger. The caller closes the ledger, then the store. */
export interface EmbeddedLedger {
  store: SqliteStore;
  ledger: Ledger;
  /** The log's origin (C2SP checkpoint origin line), made once per data folder and kept. */
  origin: string;
  signer: LogSigner;
}

/**
 * Opens (or creates) the ledger of a data folder: the SQLite store, the log key and the log's
 * origin (`callgate.local/log/<12 hex>`, made on first open and kept in the store).
 */
export async function openLedger(dataDir: string, synchronous?: 'NORMAL' | 'FULL'): Promise<EmbeddedLedger> {
  const { store, logKey } = openDataDir(dataDir, synchronous ? { synchronous } : {});
  let origin = await store.getMeta('ledger:origin');
  if (!origin) {
    origin = `callgate.local/log/${randomBytes(6).toString('hex')}`;
  }
  const signer = logSignerFromPrivateKey(origin, logKey.privateKey);
  const ledger = await Ledger.open(store, { signer, origin });
  return { store, ledger, origin, signer };
}

/** Opens an engine on a data folder (SQLite in `<dataDir>/callgate.db`, the log key beside it). */
export async function openEmbedded(options: EmbeddedOptions): Promise<EmbeddedEngine> {
  const { store, ledger, origin, signer } = await openLedger(options.dataDir, options.synchronous);
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
      await engine.close();
      await store.close();
    },
  };
}
