// Listening on a Unix-domain socket (`callgate serve --socket PATH`) instead of a TCP port: for
// a server and its clients on one machine. No port is taken, the kernel's loopback TCP is skipped
// on every request, and who may connect is the socket file's permission (0600 by default: the
// server's own user only), not a network address.
//
// A socket file outlives a process that did not remove it (kill -9, a crash). Such a stale file
// is replaced; a path where a server still answers, or a path that is not a socket at all, is
// refused, so a server never takes another's socket nor deletes a user's file.
import { chmodSync, lstatSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { CallgateError } from '@callgate/protocol';

/** The socket file's mode when none is given: read and write for the server's user only. */
export const DEFAULT_SOCKET_MODE = 0o600;

/**
 * The longest socket path, in bytes: `sun_path` is 108 bytes on Linux and 104 on macOS and the
 * BSDs, the terminating NUL included. The smaller bound holds everywhere.
 */
export const MAX_SOCKET_PATH_BYTES = 103;

/** A socket the server listens on: its absolute path and file mode. */
export interface SocketAddress {
  path: string;
  /** File mode bits (e.g. `0o600`); only the permission bits (0o777) are used. */
  mode: number;
}

/**
 * The `unix:` URL of a socket path (`unix:/run/callgate.sock`): how the server names it when
 * printing where it listens, and a spelling the Python client accepts as `CALLGATE_URL`.
 */
export function socketUrl(path: string): string {
  return `unix:${path}`;
}

/** Connects to `path`: true when something accepts, false when nothing listens (ECONNREFUSED). */
function answers(path: string): Promise<boolean> {
  return new Promise((settle) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      settle(true);
    });
    probe.once('error', () => settle(false));
  });
}

/**
 * Checks `path` before listening on it and removes a stale socket left there.
 *
 * @param path The socket's path; relative paths are resolved against the working folder.
 * @returns the absolute path.
 * @throws CallgateError `request-invalid` when the path is longer than
 *   {@link MAX_SOCKET_PATH_BYTES} or exists and is not a socket; `conflict` when a server answers
 *   on it.
 */
export async function prepareSocketPath(path: string): Promise<string> {
  const absolute = isAbsolute(path) ? path : resolve(path);
  const bytes = Buffer.byteLength(absolute);
  if (bytes > MAX_SOCKET_PATH_BYTES)
    throw new CallgateError(
      'request-invalid',
      `socket ${absolute}: the path is ${bytes} bytes, longer than a Unix socket's ${MAX_SOCKET_PATH_BYTES}; choose a shorter one`,
      { path: absolute },
    );
  let kind: 'socket' | 'other' | 'none';
  try {
    kind = lstatSync(absolute).isSocket() ? 'socket' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    kind = 'none';
  }
  if (kind === 'other')
    throw new CallgateError(
      'request-invalid',
      `socket ${absolute}: the path exists and is not a socket; callgate will not replace it`,
      { path: absolute },
    );
  if (kind === 'socket') {
    if (await answers(absolute))
      throw new CallgateError(
        'conflict',
        `socket ${absolute}: a server is listening on it already; stop it or choose another path`,
        { path: absolute },
      );
    rmSync(absolute, { force: true });
  }
  return absolute;
}

/**
 * Listens on the socket `address` (whose path {@link prepareSocketPath} checked): the file is
 * created with `address.mode` (the process's umask is narrowed while the socket is bound, so the
 * file is never more open than asked, then the mode is set exactly).
 *
 * @returns once listening.
 * @throws the listen error (e.g. `EADDRINUSE`, `EACCES` for a folder the server cannot write).
 */
export function listenOnSocket(server: Server, address: SocketAddress): Promise<void> {
  const mode = address.mode & 0o777;
  return new Promise((resolveListening, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.once('listening', () => {
      server.removeListener('error', onError);
      try {
        chmodSync(address.path, mode);
        resolveListening();
      } catch (error) {
        server.close();
        reject(error);
      }
    });
    // The socket file is made by bind(2), which runs within listen() for a path: the umask set
    // around it applies to the file. (A worker thread cannot set the umask: there the chmod in
    // 'listening' alone sets the mode.)
    let previous: number | undefined;
    try {
      previous = process.umask(~mode & 0o777);
    } catch {
      previous = undefined;
    }
    try {
      server.listen({ path: address.path });
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
  });
}
