import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDataDir } from './data-dir.js';
import { openLedger } from './embedded.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'callgate-continuity-'));
  folders.push(dataDir);
  return dataDir;
}

/** A data folder with a log of `records` records and a checkpoint; returns its verifier key. */
async function withLog(dataDir: string, records = 3): Promise<string> {
  const opened = await openLedger(dataDir, undefined, 'test');
  for (let index = 0; index < records; index += 1) {
    await opened.ledger.append('run-1', { type: 'gap', reason: `r${index}`, from_ts: 0, to_ts: 1, calls: 0 });
  }
  await opened.ledger.checkpoint();
  const key = opened.signer.verifierKey;
  await opened.close();
  return key;
}

const keyFile = (dataDir: string) => join(dataDir, 'log-key.json');
const databaseFile = (dataDir: string) => join(dataDir, 'callgate.db');

describe('log key continuity', () => {
  it('a log whose key file was deleted refuses to start, naming the key it expects, and makes no key', async () => {
    const dataDir = folder();
    const verifierKey = await withLog(dataDir);
    rmSync(keyFile(dataDir));
    await expect(openLedger(dataDir, undefined, 'test')).rejects.toMatchObject({
      kind: 'ledger-invalid',
      message: expect.stringContaining(`log-key.json is missing: the log expects log key ${verifierKey}`),
    });
    await expect(openLedger(dataDir, undefined, 'test', { init: true })).rejects.toMatchObject({
      kind: 'ledger-invalid',
    });
    expect(() => statSync(keyFile(dataDir))).toThrow(/ENOENT/);
  });

  it('a log beside another key refuses to start, naming both keys', async () => {
    const dataDir = folder();
    const verifierKey = await withLog(dataDir);
    const other = folder();
    await withLog(other, 0);
    writeFileSync(keyFile(dataDir), readFileSync(keyFile(other)), { mode: 0o600 });
    await expect(openLedger(dataDir, undefined, 'test')).rejects.toMatchObject({
      kind: 'ledger-invalid',
      message: expect.stringMatching(/log-key\.json holds .* but the log expects log key /),
    });
    await expect(openLedger(dataDir, undefined, 'test')).rejects.toThrow(verifierKey);
  });

  it('a log from before the binding was recorded is checked against its latest checkpoint', async () => {
    const dataDir = folder();
    await withLog(dataDir);
    const unbind = () => {
      const database = new Database(databaseFile(dataDir));
      database.prepare("DELETE FROM meta WHERE key = 'ledger:public_key'").run();
      database.close();
    };
    unbind();
    const again = await openLedger(dataDir, undefined, 'test');
    await again.close();
    unbind();
    const other = folder();
    await withLog(other, 0);
    writeFileSync(keyFile(dataDir), readFileSync(keyFile(other)), { mode: 0o600 });
    await expect(openLedger(dataDir, undefined, 'test')).rejects.toThrow(
      /but the log expects the log key with id [0-9a-f]{8}/,
    );
  });

  it('a key without a log (database deleted, emptied to 0 bytes, or never written) is refused unless --init', async () => {
    for (const damage of ['delete', 'truncate'] as const) {
      const dataDir = folder();
      await withLog(dataDir);
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${databaseFile(dataDir)}${suffix}`, { force: true });
      if (damage === 'truncate') closeSync(openSync(databaseFile(dataDir), 'w'));
      await expect(openLedger(dataDir, undefined, 'test')).rejects.toMatchObject({
        kind: 'ledger-invalid',
        message: expect.stringContaining(
          damage === 'delete' ? 'has a log key but no callgate.db' : 'has a log key but a 0-byte callgate.db',
        ),
      });
      const started = await openLedger(dataDir, undefined, 'test', { init: true });
      expect(started.ledger.size).toBe(0);
      await started.close();
      const reopened = await openLedger(dataDir, undefined, 'test');
      await reopened.close();
    }
  });

  it('a 0-byte database without a key is refused unless --init', async () => {
    const dataDir = folder();
    closeSync(openSync(databaseFile(dataDir), 'w'));
    expect(() => openDataDir(dataDir)).toThrow(/0-byte callgate\.db/);
    const { store } = openDataDir(dataDir, { init: true });
    await store.close();
  });

  it('a database with corrupted pages is refused at start by PRAGMA quick_check', async () => {
    const dataDir = folder();
    await withLog(dataDir, 200);
    const size = statSync(databaseFile(dataDir)).size;
    expect(size).toBeGreaterThan(8192);
    const descriptor = openSync(databaseFile(dataDir), 'r+');
    // Overwrite the middle of page 2 onwards (page 1 holds the header and schema).
    writeSync(descriptor, Buffer.alloc(4096, 0xa5), 0, 4096, 4096 + 512);
    closeSync(descriptor);
    await expect(openLedger(dataDir, undefined, 'test')).rejects.toMatchObject({
      kind: 'ledger-invalid',
      message: expect.stringMatching(/is damaged \(PRAGMA quick_check: .+\); callgate will not start on it/),
    });
  });

  it('a fresh folder, and reopening it, need no flag', async () => {
    const dataDir = folder();
    await withLog(dataDir, 0);
    await withLog(dataDir, 2);
    const reopened = await openLedger(dataDir, undefined, 'test');
    expect(reopened.ledger.size).toBe(2);
    await reopened.close();
  });
});
