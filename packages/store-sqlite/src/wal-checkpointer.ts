// Background WAL checkpoints on a worker thread with its own connection, so that copying the WAL
// into the database file never holds the event loop that answers requests.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '@callgate/core';

/**
 * What one background checkpoint reported: SQLite's three columns of its last
 * `PRAGMA wal_checkpoint`, and whether it ended with a RESTART.
 */
export interface CheckpointResult {
  /** 1 when the checkpoint could not run at all (another checkpoint held the lock), else 0. */
  busy: number;
  /** Frames in the WAL file. */
  log: number;
  /** Frames of the WAL now copied into the database file. */
  checkpointed: number;
  /**
   * True when the WAL file was past its size limit and the checkpoint ended with
   * `wal_checkpoint(RESTART)`, so the next commit rewinds the log (its three columns are RESTART's).
   */
  restarted: boolean;
}

type Reply = { ok: true; result: CheckpointResult } | { ok: false; message: string; code?: string };

// CommonJS, evaluated by the worker: `require` resolves better-sqlite3 by the absolute path the
// store's module resolved, so the worker loads the same copy whatever the working folder.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const walPath = workerData.path + '-wal';
function walBytes() {
  try {
    return statSync(walPath).size;
  } catch {
    return 0;
  }
}
const database = new Database(workerData.path, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
database.pragma('wal_autocheckpoint = 0');
database.pragma('journal_size_limit = ' + workerData.walSizeLimitBytes);
parentPort.on('message', (message) => {
  if (message === 'close') {
    database.close();
    parentPort.close();
    return;
  }
  try {
    const [passive] = database.pragma('wal_checkpoint(PASSIVE)');
    // Commits landing while a passive pass copies keep the log from ever being wholly copied, so
    // under writes that never pause the log is never rewound and the file grows without bound.
    // Past the limit, RESTART copies the few frames left (holding new writers meanwhile, through
    // their busy timeout) and waits for readers, so the next commit rewinds the log.
    if (walBytes() > workerData.walSizeLimitBytes) {
      const [restart] = database.pragma('wal_checkpoint(RESTART)');
      parentPort.postMessage({ ok: true, result: { ...restart, restarted: true } });
    } else {
      parentPort.postMessage({ ok: true, result: { ...passive, restarted: false } });
    }
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message), code: error && error.code });
  }
});
`;

const betterSqlite3Path = createRequire(import.meta.url).resolve('better-sqlite3');

/** Settings of a {@link WalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** The database file (already in WAL mode). */
  path: string;
  /** Milliseconds the worker's connection waits for a lock when it opens. */
  busyTimeoutMs: number;
  /**
   * Bound on the WAL file (bytes): past it, a checkpoint ends with `wal_checkpoint(RESTART)` so
   * the next commit rewinds the log; the rewound file is truncated to this size.
   */
  walSizeLimitBytes: number;
  logger: Logger;
  /** Checkpoints on the calling thread: used only when the worker cannot start or dies. */
  fallback: () => void;
}

/**
 * Runs `PRAGMA wal_checkpoint(PASSIVE)` on a worker thread with a connection of its own (started
 * at the first checkpoint, so a short-lived store never starts one). PASSIVE never waits for
 * readers or writers: it copies the frames no reader still needs and returns; the writer's
 * commits go on meanwhile (SQLite's WAL locking), so nothing acknowledged waits for it. When the
 * WAL file is past `walSizeLimitBytes` after that pass, a `wal_checkpoint(RESTART)` follows: it
 * copies the frames committed during the pass (new commits wait for it, up to their busy timeout)
 * so the next commit rewinds the log — the bound on the WAL under writes that never pause. One
 * checkpoint at a time: a call while one runs resolves with `undefined` at once. When the
 * worker cannot start or dies, it is told (`warn`) and checkpoints run on the calling thread.
 */
export class WalCheckpointer {
  readonly #options: WalCheckpointerOptions;
  #worker: Worker | undefined;
  #exited: Promise<void> | undefined;
  #pending: ((reply: Reply | undefined) => void) | undefined;
  #broken = false;
  #closed = false;

  constructor(options: WalCheckpointerOptions) {
    this.#options = options;
  }

  /**
   * One passive checkpoint. Resolves with SQLite's report, or `undefined` when one is already
   * running, the checkpointer is closed or the checkpoint ran on the calling thread.
   * @throws never; a failed checkpoint is told (`warn`) and retried at the next call.
   */
  checkpoint(): Promise<CheckpointResult | undefined> {
    if (this.#closed || this.#pending) return Promise.resolve(undefined);
    const worker = this.#broken ? undefined : (this.#worker ?? this.#start());
    if (!worker) {
      this.#runFallback();
      return Promise.resolve(undefined);
    }
    return new Promise<Reply | undefined>((resolve) => {
      this.#pending = resolve;
      worker.postMessage('checkpoint');
    }).then((reply) => {
      if (reply && !reply.ok) {
        this.#options.logger.warn(
          { error: { message: reply.message, code: reply.code }, path: this.#options.path },
          'background WAL checkpoint failed; retrying at the next interval',
        );
      }
      return reply?.ok ? reply.result : undefined;
    });
  }

  /** Closes the worker's connection and waits for the worker to end. Calling it again does nothing. */
  async close(): Promise<void> {
    this.#closed = true;
    if (!this.#worker) return;
    this.#worker.ref(); // the process waits for the connection to close
    this.#worker.postMessage('close');
    await this.#exited;
    this.#worker = undefined;
  }

  #start(): Worker | undefined {
    const { path, busyTimeoutMs, walSizeLimitBytes } = this.#options;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module: betterSqlite3Path, path, busyTimeoutMs, walSizeLimitBytes },
      });
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
    worker.unref();
    worker.on('message', (reply: Reply) => this.#settle(reply));
    worker.on('error', (error) => this.#fail(error));
    this.#exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.once('exit', () => {
      this.#settle(undefined);
      if (!this.#closed) this.#fail(new Error('the WAL checkpoint worker exited'));
    });
    this.#worker = worker;
    return worker;
  }

  #settle(reply: Reply | undefined): void {
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.(reply);
  }

  #fail(error: unknown): void {
    if (this.#broken) return;
    this.#broken = true;
    this.#worker = undefined;
    this.#settle(undefined);
    this.#options.logger.warn(
      { error, path: this.#options.path },
      'the WAL checkpoint worker failed; checkpoints now run on the calling thread',
    );
  }

  #runFallback(): void {
    try {
      this.#options.fallback();
    } catch (error) {
      this.#options.logger.warn(
        { error, path: this.#options.path },
        'background WAL checkpoint failed; retrying at the next interval',
      );
    }
  }
}
