// Where `callgate serve` keeps its state: SQLite in a data folder (the embedded default, one
// server), or PostgreSQL shared by several server replicas (`--store postgres://…`).
import type { Engine, Logger, Policy, Store, ToolSpec } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import type { SessionBacking } from '@callgate/server';
import { openSharedEngine } from '@callgate/store-postgres';
import { openEmbedded } from '@callgate/store-sqlite';

/** The engine `callgate serve` fronts, on whichever store it was given. */
export interface ServeEngine {
  engine: Engine;
  store: Store;
  verifierKey: string;
  /** For the startup lines: the data folder, or the database (without password). */
  where: string;
  /** How `callgate keys create` reaches this store. */
  keysHint: string;
  /** What is wrong with a shared store, if anything (health); absent for SQLite. */
  storeHealth?: () => Promise<string | undefined>;
  /** Where signed-in UI sessions are kept besides the process (PostgreSQL). */
  sessionBacking?: SessionBacking;
  close(): Promise<void>;
}

/** Options of {@link openServeEngine}. */
export interface ServeEngineOptions {
  /** A `postgres://` URL: several replicas share it. Otherwise SQLite in `dataDir`. */
  store?: string;
  /** The log key file every replica reads (PostgreSQL only). */
  logKey?: string;
  dataDir: string;
  policy: Policy;
  tools: ToolSpec[];
  logger: Logger;
  vault?: boolean;
  /** Start a new log beside a log key that has none (SQLite; see openEmbedded). */
  init?: boolean;
  /** SQLite durability (PostgreSQL commits as its server is configured). Default NORMAL. */
  synchronous?: 'NORMAL' | 'FULL';
}

/**
 * Opens the engine. @throws CallgateError `gate-unavailable` when PostgreSQL cannot be reached
 * (the server does not start: it fails closed), others as openEmbedded / openSharedEngine.
 */
export async function openServeEngine(options: ServeEngineOptions): Promise<ServeEngine> {
  const common = {
    policy: options.policy,
    tools: options.tools,
    logger: options.logger,
    ...(options.vault !== undefined ? { vault: options.vault } : {}),
  };
  if (options.store !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(options.store))
      throw new CallgateError(
        'request-invalid',
        `--store: expected a postgres:// or postgresql:// URL, got ${JSON.stringify(options.store.split('@').at(-1))}`,
      );
    const shared = await openSharedEngine({
      url: options.store,
      ...(options.logKey !== undefined ? { logKeyFile: options.logKey } : {}),
      ...common,
    });
    return {
      engine: shared.engine,
      store: shared.store,
      verifierKey: shared.verifierKey,
      where: `${shared.store.where} (schema ${shared.store.schema}, shared by every replica)`,
      keysHint: `--store '${shared.store.where}'`,
      storeHealth: () => shared.health(),
      sessionBacking: shared.sessions,
      close: () => shared.close(),
    };
  }
  const embedded = await openEmbedded({
    dataDir: options.dataDir,
    ...common,
    ...(options.init ? { init: true } : {}),
    ...(options.synchronous ? { synchronous: options.synchronous } : {}),
  });
  return {
    engine: embedded.engine,
    store: embedded.store,
    verifierKey: embedded.verifierKey,
    where: `${options.dataDir} (SQLite, synchronous ${embedded.store.synchronous})`,
    keysHint: `--data ${options.dataDir}`,
    close: () => embedded.close(),
  };
}
