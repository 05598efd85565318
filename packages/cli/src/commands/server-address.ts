// Where a running `callgate serve` listens, kept in its data folder while it runs, so that a
// command refused by the folder's writer lock can name that server's real address (its port may
// be any, `--port 0` included) instead of the default one.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file's name inside the data folder: `{"pid": 123, "url": "http://127.0.0.1:7420"}`. */
export const SERVER_ADDRESS_FILE = 'server-address.json';

/** The default address, for hints when no running server said where it listens. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:7420';

/**
 * Writes `url` as the data folder's server address.
 * @returns a function that removes the file (when it is still this process's).
 */
export function writeServerAddress(dataDir: string, url: string): () => void {
  const path = join(dataDir, SERVER_ADDRESS_FILE);
  const content = JSON.stringify({ pid: process.pid, url });
  writeFileSync(path, content, { mode: 0o600 });
  return () => {
    try {
      if (readFileSync(path, 'utf8') === content) rmSync(path);
    } catch {
      // Already gone.
    }
  };
}

/** The URL the server running on `dataDir` listens on, or undefined when none said so (or it has stopped). */
export function readServerAddress(dataDir: string): string | undefined {
  try {
    const { pid, url } = JSON.parse(readFileSync(join(dataDir, SERVER_ADDRESS_FILE), 'utf8')) as {
      pid?: unknown;
      url?: unknown;
    };
    if (typeof pid !== 'number' || typeof url !== 'string') return undefined;
    process.kill(pid, 0);
    return url;
  } catch {
    return undefined;
  }
}
