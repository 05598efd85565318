// getApiKey answers from memory, but never past a change: a key another connection (another
// process: `callgate keys revoke`) revokes or creates is seen on the very next lookup.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from './sqlite-store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function databasePath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-key-cache-'));
  folders.push(folder);
  return join(folder, 'callgate.db');
}

describe('SqliteStore API key lookups', () => {
  it('see a key revoked or created by another connection at once, and their own changes', async () => {
    const path = databasePath();
    const server = SqliteStore.open(path);
    const tool = SqliteStore.open(path);
    try {
      await server.putApiKey({ key_hash: 'h1', name: 'bot', role: 'agent', created_at: 1 });
      expect((await server.getApiKey('h1'))?.revoked_at).toBeUndefined();
      expect(await server.getApiKey('h2')).toBeUndefined();
      // Remembered lookups answer the same.
      expect((await server.getApiKey('h1'))?.name).toBe('bot');

      expect(await tool.revokeApiKey('bot', 5)).toBe(true);
      expect((await server.getApiKey('h1'))?.revoked_at).toBe(5);
      await tool.putApiKey({ key_hash: 'h2', name: 'other', role: 'reviewer', created_at: 2 });
      expect((await server.getApiKey('h2'))?.name).toBe('other');

      expect(await server.revokeApiKey('other', 9)).toBe(true);
      expect((await server.getApiKey('h2'))?.revoked_at).toBe(9);
      // What a caller changes in an answer does not change what is remembered.
      const answer = await server.getApiKey('h2');
      if (answer) answer.name = 'changed';
      expect((await server.getApiKey('h2'))?.name).toBe('other');
    } finally {
      await server.close();
      await tool.close();
    }
  });
});
