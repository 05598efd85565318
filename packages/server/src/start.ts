import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { type AppOptions, appInternals, createApp } from './app.js';
import type { HealthChecks } from './health.js';
import {
  answerClientErrors,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  requestTimeoutOptions,
} from './http/request-timeout.js';
import {
  DEFAULT_SOCKET_MODE,
  type ListeningSocket,
  listenOnSocket,
  prepareSocketPath,
  socketUrl,
} from './http/unix-socket.js';
import { drainBeforeClose } from './http/unread-body.js';

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** Options of {@link startServer}: an app from `createApp`, or the options to make one. */
export type StartServerOptions = ({ app: Hono } | { options: AppOptions }) & {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 7420; 0 picks a free port. */
  port?: number;
  /**
   * A Unix-domain socket's path to listen on instead of `host:port` (which are then ignored). A
   * stale socket file there is replaced; a path where a server answers, or that is not a socket,
   * is refused. The file is removed when the server closes, if the path still names the file it
   * made (another server's socket there is left alone).
   */
  socket?: string;
  /** The socket file's permission bits; default `0o600` (the server's user only). */
  socketMode?: number;
  /** Shut down on these signals. Default `['SIGINT', 'SIGTERM']`; `[]` installs no handler. */
  signals?: readonly NodeJS.Signals[];
  /** Longest wait for accepted requests to finish on shutdown, ms. Default 10,000. */
  drainTimeoutMs?: number;
  /**
   * Longest wait for a request's head (request line and headers), ms; default 10,000. A request
   * not received in time is answered 408 (`request-invalid`) and its connection closed.
   */
  headersTimeoutMs?: number;
  /**
   * Longest wait for a whole request, head and body, ms; default 30,000 (a body declared longer
   * than it comes is not waited for beyond this). Answered as `headersTimeoutMs` is.
   */
  requestTimeoutMs?: number;
};

/** A listening server. */
export interface RunningServer {
  /** `http://host:port` (IPv6 hosts in brackets), or `unix:/path` on a socket. */
  url: string;
  /** The TCP host; `localhost` on a socket. */
  host: string;
  /** The TCP port; 0 on a socket. */
  port: number;
  /** The socket's absolute path, when listening on one. */
  socket?: string;
  app: Hono;
  /** The checks `/v1/health` and `/v1/ready` run: `health.add(contributor)` adds one. */
  health: HealthChecks;
  /**
   * Shuts down: refuses new requests (503), ends long-polls and event streams, waits for
   * accepted requests to finish their writes, closes the MCP gateway (its sessions' runs end
   * `cancelled`, its upstreams stop), then closes the engine (flushing the ledger) and its
   * store. Safe to call more than once.
   */
  close(): Promise<void>;
  /** Resolves when the server has shut down (by `close` or a signal). */
  closed: Promise<void>;
}

/**
 * Serves an app over HTTP/1.1 with `@hono/node-server`, listening on `host:port` or on a
 * Unix-domain socket (`socket`), and shuts it down gracefully on SIGINT/SIGTERM (see
 * {@link RunningServer.close}).
 *
 * @returns once listening.
 * @throws the listen error (e.g. `EADDRINUSE`); CallgateError `request-invalid` for a timeout
 *   that is not a positive whole number of ms, or a socket path that is too long or exists and
 *   is not a socket; `conflict` for a socket a server answers on.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const app = 'app' in options ? options.app : createApp(options.options);
  const { server: context, detach, reloader } = appInternals(app);
  const host = options.host ?? '127.0.0.1';
  const requestedPort = options.port ?? 7420;
  const timeouts = {
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  const serverOptions = requestTimeoutOptions(timeouts);
  const socket = options.socket === undefined ? undefined : await prepareSocketPath(options.socket);
  const http = createAdaptorServer({ fetch: app.fetch, hostname: host, serverOptions }) as Server;
  answerClientErrors(http, timeouts);
  // An answer sent before the body was read (413, 401, 404) reaches a client still writing it.
  drainBeforeClose(http, { timeoutMs: timeouts.requestTimeoutMs });
  let listening: ListeningSocket | undefined;
  if (socket !== undefined) {
    listening = await listenOnSocket(http, { path: socket, mode: options.socketMode ?? DEFAULT_SOCKET_MODE });
  } else {
    await new Promise<void>((resolve, reject) => {
      http.once('listening', () => resolve());
      http.once('error', reject);
      http.listen(requestedPort, host);
    });
  }
  const port = socket === undefined ? (http.address() as AddressInfo).port : 0;
  const url =
    socket === undefined ? `http://${host.includes(':') ? `[${host}]` : host}:${port}` : socketUrl(socket);

  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const onSignal = (signal: NodeJS.Signals) => {
    context.logger.info({ signal }, 'shutting down');
    close().catch((error) => context.logger.error({ error: String(error) }, 'shutdown failed'));
  };
  for (const signal of signals) process.once(signal, onSignal);
  const stopReloading = signals.length > 0 ? reloader.onSignal('SIGHUP') : () => {};

  function close(): Promise<void> {
    closing ??= (async () => {
      for (const signal of signals) process.removeListener(signal, onSignal);
      stopReloading();
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const drained = await context.lifecycle.drain(options.drainTimeoutMs ?? 10_000);
      if (!drained)
        context.logger.warn({ in_flight: context.lifecycle.inFlight }, 'shutdown: requests still running');
      detach();
      // MCP sessions end (their runs recorded) while the engine is still open; ending them also
      // ends their event streams, so the connections below can close by themselves.
      if (context.gateway) {
        try {
          await context.gateway.close();
        } catch (error) {
          context.logger.error({ error: String(error) }, 'shutdown: the MCP gateway did not close cleanly');
        }
      }
      // Answers just produced may still be on their way out: let connections end by themselves
      // (each answer sent while draining says `Connection: close`), then cut what is left.
      http.closeIdleConnections();
      const ended = await Promise.race([stopped.then(() => true), delay(2_000).then(() => false)]);
      if (!ended) {
        http.closeAllConnections();
        await stopped;
      }
      // Only the file this server made: another server may have taken the path since.
      try {
        listening?.release();
      } catch (error) {
        context.logger.warn({ error: String(error), socket }, 'shutdown: the socket file was not removed');
      }
      try {
        await context.engine.close();
      } finally {
        await context.engine.store.close();
      }
      context.logger.info({}, 'stopped');
      resolveClosed();
    })();
    return closing;
  }

  return {
    url,
    host: socket === undefined ? host : 'localhost',
    port,
    ...(socket !== undefined ? { socket } : {}),
    app,
    health: context.health,
    close,
    closed,
  };
}
