// Listening on a Unix-domain socket (`callgate serve --socket PATH`) instead of a TCP port: for
// a server and its clients on one machine. No port is taken, the kernel's loopback TCP is skipped
// on every request, and who may connect is the socket file's permission (0600 by default: the
// server's own user only), not a network address.
//
// A socket file outlives a process that did not remove it (kill -9, a crash). Such a stale file
// is replaced; a path where a server still answers, or a path that is not a socket at all, is
// refused, so a server never takes another's socket nor deletes a user's file. On stopping, the
// server removes the path only while it is still the file it made (same device and inode): once
// its file was deleted and another server took the path, that server's socket stays.
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, lstatSync, rmSync, statSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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
 *   {@link MAX_SOCKET_PATH_BYTES}, its folder does not exist (or is not a folder), or it exists
 *   and is not a socket; `conflict` when a server answers on it.
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
  const folder = dirname(absolute);
  let folderIsOne: boolean;
  try {
    folderIsOne = statSync(folder).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new CallgateError(
      'request-invalid',
      `socket ${absolute}: the folder ${folder} does not exist; create it first or choose another path`,
      { path: absolute },
    );
  }
  if (!folderIsOne)
    throw new CallgateError('request-invalid', `socket ${absolute}: ${folder} is not a folder`, {
      path: absolute,
    });
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

/** The socket file a server made: {@link ListeningSocket.release} removes it while it is still that file. */
export interface ListeningSocket {
  /**
   * Removes the socket file if the path still names the file this server made (same device and
   * inode); leaves whatever else is there (another server's socket, a user's file). Call it once
   * the server has closed.
   */
  release(): void;
}

/**
 * Listens on the socket `address` (whose path {@link prepareSocketPath} checked): the file is
 * created with `address.mode` (the process's umask is narrowed while the socket is bound, so the
 * file is never more open than asked, then the mode is set exactly).
 *
 * The socket is bound at a fresh name beside the path and then hard-linked to it (link(2) never
 * replaces a file), and the fresh name removed: Node removes the name it bound when the server
 * closes, whatever is there then, so it must not be the path clients use.
 *
 * @returns once listening, with what removes the file after the server closed.
 * @throws the listen error (e.g. `EACCES` for a folder the server cannot write); CallgateError
 *   `conflict` when a file appeared at the path meanwhile.
 */
export async function listenOnSocket(server: Server, address: SocketAddress): Promise<ListeningSocket> {
  const mode = address.mode & 0o777;
  const fresh = freshName(address.path);
  await bind(server, fresh ?? address.path, mode);
  if (fresh !== undefined) {
    try {
      linkSync(fresh, address.path);
    } catch (error) {
      server.close();
      rmSync(fresh, { force: true });
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new CallgateError(
          'conflict',
          `socket ${address.path}: a file appeared at the path while the server started; stop what made it or choose another path`,
          { path: address.path },
        );
      throw error;
    }
    unlinkSync(fresh);
  }
  const made = lstatSync(address.path);
  return {
    release() {
      try {
        const now = lstatSync(address.path);
        if (now.dev === made.dev && now.ino === made.ino) unlinkSync(address.path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
  };
}

/**
 * A name beside `path`, in the same folder (so it can be hard-linked there), that is not taken
 * and fits a socket path; `undefined` when no such name fits (a path near the length limit with
 * a short file name): then the socket is bound at `path` itself.
 */
function freshName(path: string): string | undefined {
  const name = join(dirname(path), `.${randomBytes(6).toString('base64url')}`);
  return Buffer.byteLength(name) <= MAX_SOCKET_PATH_BYTES ? name : undefined;
}

/** Binds and listens on `path` with the file mode `mode`. */
function bind(server: Server, path: string, mode: number): Promise<void> {
  return new Promise((resolveListening, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.once('listening', () => {
      server.removeListener('error', onError);
      try {
        chmodSync(path, mode);
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
      server.listen({ path });
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
  });
}
