import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreFaults } from './store-faults.js';
import { WriteQueue } from './write-queue.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

// SQLite's own quota (`max_page_count`) gives a real SQLITE_FULL without a small file system:
// the store's fault path is the same as on a full disk (see the CLI's tmpfs test).
describe('store faults', () => {
  it('a full database rejects writes with store-unavailable, and the next commit clears it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'callgate-faults-'));
    folders.push(folder);
    const database = new Database(join(folder, 'quota.db'));
    database.pragma('journal_mode = WAL');
    database.exec('CREATE TABLE notes (text TEXT NOT NULL)');
    const pages = database.pragma('page_count', { simple: true }) as number;
    database.pragma(`max_page_count = ${pages + 4}`);
    const faults = new StoreFaults('quota.db');
    const queue = new WriteQueue(database, faults);
    const insert = database.prepare('INSERT INTO notes VALUES (?)');
    await queue.write(() => insert.run('small'));
    expect(faults.status()).toEqual({ status: 'ok' });

    const big = 'x'.repeat(64 * 1024);
    await expect(queue.write(() => insert.run(big))).rejects.toMatchObject({
      kind: 'store-unavailable',
      message: expect.stringContaining('SQLITE_FULL'),
    });
    expect(faults.status()).toMatchObject({
      status: 'unavailable',
      reason: expect.stringContaining('SQLITE_FULL'),
    });
    // A constraint or other request error is not a store fault.
    await expect(queue.write(() => database.prepare('INSERT INTO missing VALUES (1)').run())).rejects.toThrow(
      /no such table/,
    );
    expect(faults.faulty).toBe(true);

    database.pragma('max_page_count = 1000000');
    await queue.write(() => insert.run(big));
    expect(faults.status()).toEqual({ status: 'ok' });
    expect(database.prepare('SELECT count(*) FROM notes').pluck().get()).toBe(2);
    database.close();
  });
});
