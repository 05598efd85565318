// An engine on PostgreSQL, as each of several server replicas opens it: the shared store, the
// log's one key (a key file every replica reads, or the key kept in the database), the log's one
// origin, the shared ledger and the approval channel between replicas.
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { type ApprovalPort, Engine, type Logger, type Policy, type ToolSpec } from '@callgate/core';
import { generateEd25519KeyPair, randomBytes } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { CallgateError } from '@callgate/protocol';
import { PostgresApprovalChannel } from './approval-channel.js';
import type { PostgresStoreOptions } from './database.js';
import { PostgresStore } from './postgres-store.js';
import { PostgresSessionBacking } from './session-backing.js';

/** Meta keys of the log's identity in the database. */
const ORIGIN_META_KEY = 'ledger:origin';
const SIGNING_KEY_META_KEY = 'ledger:signing-key';

/** Options of {@link openSharedEngine}. */
export interface SharedEngineOptions extends PostgresStoreOptions {
  policy: Policy;
  tools?: ToolSpec[];
  approvalPorts?: ApprovalPort[];
  vault?: boolean;
  /**
   * The log key file every replica reads (`{"v":1,"algorithm":"ed25519","private_key":"<base64url
   * seed>"}`, mode 0600, as `callgate serve` writes in a data folder). Without it the key is made
   * by the first replica and kept in the database (meta `ledger:signing-key`).
   */
  logKeyFile?: string;
  /** Sign a checkpoint at most this many ms after a record. Default 1000. */
  checkpointEveryMs?: number;
  logger?: Logger;
}

/** An engine whose store, ledger and approvals are shared with the other replicas. */
export interface SharedEngine {
  engine: Engine;
  store: PostgresStore;
  ledger: Ledger;
  channel: PostgresApprovalChannel;
  /** Signed-in UI sessions in the database (pass as the server's `sessionBacking`). */
  sessions: PostgresSessionBacking;
  origin: string;
  verifierKey: string;
  /** A problem with the database, in words, or undefined when it answers (for health checks). */
  health(): Promise<string | undefined>;
  close(): Promise<void>;
}

/**
 * Reads a log key file.
 * @throws CallgateError `request-invalid` when it is missing, others may read it, or it is malformed.
 */
export function readLogKeyFile(path: string): Uint8Array {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'r');
  } catch (error) {
    throw new CallgateError('request-invalid', `log key file ${path}: ${(error as Error).message}`);
  }
  try {
    const stats = fstatSync(descriptor);
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0)
      throw new CallgateError(
        'request-invalid',
        `log key file ${path} has mode ${(stats.mode & 0o777).toString(8)}: group or others may read it; run chmod 600 ${path}`,
      );
    const parsed = JSON.parse(readFileSync(descriptor, 'utf8')) as Record<string, unknown>;
    const seed =
      typeof parsed.private_key === 'string' ? Buffer.from(parsed.private_key, 'base64url') : undefined;
    if (parsed.v !== 1 || parsed.algorithm !== 'ed25519' || seed?.length !== 32)
      throw new Error('expected {"v":1,"algorithm":"ed25519","private_key":"<base64url of 32 bytes>"}');
    return new Uint8Array(seed);
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    throw new CallgateError(
      'request-invalid',
      `log key file ${path} is malformed: ${(error as Error).message}`,
    );
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Opens this replica's engine on PostgreSQL: connects and migrates, claims (or reads) the log's
 * origin and key, opens the shared ledger and starts listening for the other replicas' approvals.
 *
 * @throws CallgateError `gate-unavailable` when PostgreSQL cannot be reached (nothing is served
 *   then: the gate fails closed), `ledger-invalid` when this replica's key file is not the key the
 *   log is signed with, `request-invalid` for a bad key file.
 */
export async function openSharedEngine(options: SharedEngineOptions): Promise<SharedEngine> {
  const store = await PostgresStore.open(options);
  let channel: PostgresApprovalChannel | undefined;
  try {
    const sequencer = store.sequencer;
    const origin = await sequencer.claimMeta(
      ORIGIN_META_KEY,
      `callgate.local/log/${randomBytes(6).toString('hex')}`,
    );
    const seed =
      options.logKeyFile !== undefined
        ? readLogKeyFile(options.logKeyFile)
        : new Uint8Array(
            Buffer.from(
              await sequencer.claimMeta(
                SIGNING_KEY_META_KEY,
                Buffer.from(generateEd25519KeyPair().privateKey).toString('base64url'),
              ),
              'base64url',
            ),
          );
    const signer = logSignerFromPrivateKey(origin, seed);
    const ledger = await Ledger.open(store, {
      signer,
      origin,
      ...(options.checkpointEveryMs !== undefined ? { checkpointEveryMs: options.checkpointEveryMs } : {}),
      ...(options.logger
        ? { onError: (error: unknown) => options.logger?.warn({ error: String(error) }, 'checkpoint failed') }
        : {}),
    });
    channel = new PostgresApprovalChannel(store, options.logger ? { logger: options.logger } : {});
    await channel.start();
    const engine = new Engine({
      store,
      ledger,
      policy: options.policy,
      approvalChannel: channel,
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.approvalPorts ? { approvalPorts: options.approvalPorts } : {}),
      ...(options.vault !== undefined ? { vault: options.vault } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const opened = channel;
    return {
      engine,
      store,
      ledger,
      channel: opened,
      sessions: new PostgresSessionBacking(store),
      origin,
      verifierKey: signer.verifierKey,
      async health() {
        if (!(await store.ping())) return `PostgreSQL at ${store.where} is unreachable`;
        if (!opened.listening) return `PostgreSQL at ${store.where}: approval notifications are reconnecting`;
        return undefined;
      },
      async close() {
        try {
          await engine.close();
        } finally {
          await opened.close();
          await store.close();
        }
      },
    };
  } catch (error) {
    await channel?.close();
    await store.close();
    throw error;
  }
}
