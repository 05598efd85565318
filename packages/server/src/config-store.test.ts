import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readServerConfig } from './config.js';

async function configFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'callgate-config-store-'));
  await writeFile(join(dir, 'callgate.yaml'), text);
  return join(dir, 'callgate.yaml');
}

describe('callgate.yaml store: and log_key:', () => {
  it('takes a postgres:// URL and a key file relative to the file', async () => {
    const path = await configFile('store: postgres://callgate@db:5432/gate\nlog_key: keys/log-key.json\n');
    const config = await readServerConfig(path);
    expect(config.store).toBe('postgres://callgate@db:5432/gate');
    expect(config.logKey).toBe(join(path, '..', 'keys/log-key.json'));
  });

  it('reads the URL from the variable url_env names, and says where when it is not set', async () => {
    const path = await configFile('store: { url_env: GATE_DB }\n');
    expect((await readServerConfig(path, { GATE_DB: 'postgresql://x@h/d' })).store).toBe(
      'postgresql://x@h/d',
    );
    await expect(readServerConfig(path, {})).rejects.toThrow(
      /\.yaml:1:\d+: store\.url_env: the variable GATE_DB is not set/,
    );
  });

  it('refuses a store that is not a PostgreSQL URL, naming the key', async () => {
    const path = await configFile('store: mysql://db/gate\n');
    await expect(readServerConfig(path)).rejects.toThrow(/store/);
    await expect(readServerConfig(path)).rejects.toThrow(/postgres:\/\/ or postgresql:\/\//);
  });
});
