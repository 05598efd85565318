import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDataDir } from './data-dir.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';

describe('openDataDir', () => {
  it('creates the folder (0700), the key and the database (0600), and reopens them', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'callgate-data-'));
    folders.push(parent);
    const dataDir = join(parent, 'nested', '.callgate');

    const first = openDataDir(dataDir, { synchronous: 'FULL' });
    expect(first.databasePath).toBe(join(dataDir, 'callgate.db'));
    expect(first.logKey.created).toBe(true);
    expect(first.store.synchronous).toBe('FULL');
    await first.store.setMeta('origin', 'callgate.example/log');
    await first.store.close();
    if (posix) {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(first.databasePath).mode & 0o777).toBe(0o600);
    }

    const second = openDataDir(dataDir);
    expect(second.logKey.created).toBe(false);
    expect(Buffer.from(second.logKey.publicKey).equals(Buffer.from(first.logKey.publicKey))).toBe(true);
    expect(second.store.synchronous).toBe('NORMAL');
    expect(await second.store.getMeta('origin')).toBe('callgate.example/log');
    await second.store.close();
  });
});
