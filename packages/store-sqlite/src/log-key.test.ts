import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateLogKey } from './log-key.js';

const folders: string[] = [];
function newFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-log-key-'));
  folders.push(folder);
  return folder;
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';

function signsAndVerifies(privateKey: Uint8Array, publicKey: Uint8Array): boolean {
  const privateKeyObject = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), privateKey]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKeyObject = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]),
    format: 'der',
    type: 'spki',
  });
  const message = Buffer.from('callgate.example/log\n1\n');
  return verify(null, message, publicKeyObject, sign(null, message, privateKeyObject));
}

describe('loadOrCreateLogKey', () => {
  it('makes a key on first start, in a 0600 file of the documented shape, and loads it after', () => {
    const folder = newFolder();
    const made = loadOrCreateLogKey(folder);
    expect(made.created).toBe(true);
    expect(made.privateKey).toHaveLength(32);
    expect(made.publicKey).toHaveLength(32);
    expect(signsAndVerifies(made.privateKey, made.publicKey)).toBe(true);

    const path = join(folder, 'log-key.json');
    if (posix) expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      v: 1,
      algorithm: 'ed25519',
      private_key: Buffer.from(made.privateKey).toString('base64url'),
    });
    expect(readdirSync(folder)).toEqual(['log-key.json']);

    const loaded = loadOrCreateLogKey(folder);
    expect(loaded.created).toBe(false);
    expect(Buffer.from(loaded.privateKey).equals(Buffer.from(made.privateKey))).toBe(true);
    expect(Buffer.from(loaded.publicKey).equals(Buffer.from(made.publicKey))).toBe(true);
  });

  it.runIf(posix)('refuses a key file that group or others may read', () => {
    const folder = newFolder();
    loadOrCreateLogKey(folder);
    const path = join(folder, 'log-key.json');
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      chmodSync(path, mode);
      expect(() => loadOrCreateLogKey(folder)).toThrow(/group or others may read it.*chmod 600/);
    }
    chmodSync(path, 0o400);
    expect(loadOrCreateLogKey(folder).created).toBe(false);
  });

  it('refuses a malformed key file, saying what is wrong', () => {
    const cases: [string, RegExp][] = [
      ['not json', /not JSON/],
      ['[]', /not a JSON object/],
      ['{"v":2,"algorithm":"ed25519","private_key":"x"}', /unknown version 2/],
      ['{"v":1,"algorithm":"rsa","private_key":"x"}', /unknown algorithm "rsa"/],
      ['{"v":1,"algorithm":"ed25519","private_key":"c2hvcnQ"}', /private_key is not the base64url/],
      [
        `{"v":1,"algorithm":"ed25519","private_key":"${'A'.repeat(42)}="}`,
        /private_key is not the base64url/,
      ],
      ['{"v":1,"algorithm":"ed25519"}', /private_key is not the base64url/],
    ];
    for (const [text, message] of cases) {
      const folder = newFolder();
      writeFileSync(join(folder, 'log-key.json'), text, { mode: 0o600 });
      expect(() => loadOrCreateLogKey(folder), text).toThrow(message);
      expect(() => loadOrCreateLogKey(folder), text).toThrow(/log key file .*log-key\.json is malformed/);
    }
  });

  it('fails when the folder does not exist', () => {
    expect(() => loadOrCreateLogKey(join(newFolder(), 'missing'))).toThrow(/ENOENT/);
  });
});
