import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bundleKeys,
  generateLogSigner,
  keyToPin,
  logSignerFromPrivateKey,
  signKeyRotation,
  verifyBundle,
} from '@callgate/core/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedger } from './embedded.js';
import { rotateLogKey } from './rotate-key.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const RUN = 'run-across-rotation';
const gap = (reason: string) => ({ type: 'gap' as const, reason, from_ts: 0, to_ts: 1, calls: 0 });

describe('callgate log-key rotate', () => {
  it('moves the log to a new key that verifiers pinning the old key follow; a forged rotation fails', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callgate-rotate-'));
    folders.push(dataDir);
    const first = await openLedger(dataDir, undefined, 'test');
    const oldKey = first.signer.verifierKey;
    await first.ledger.append(RUN, { type: 'run-start', principal: 'p', framework: 'test', labels: {} });
    for (let index = 0; index < 3; index += 1) await first.ledger.append(RUN, gap(`before ${index}`));
    await first.close();

    const rotated = await rotateLogKey(dataDir);
    expect(rotated).toMatchObject({ oldKey, size: 4 });
    expect(rotated.newKey).not.toBe(oldKey);
    expect(readdirSync(dataDir).filter((name) => name.startsWith('log-key'))).toEqual(
      expect.arrayContaining(['log-key.json', expect.stringMatching(/^log-key\.retired-[0-9a-f]{8}\.json$/)]),
    );

    const second = await openLedger(dataDir, undefined, 'test');
    expect(second.signer.verifierKey).toBe(rotated.newKey);
    for (let index = 0; index < 3; index += 1) await second.ledger.append(RUN, gap(`after ${index}`));
    const bundle = await second.ledger.exportRun(RUN);
    await second.close();
    expect(bundle.public_key).toBe(rotated.newKey);
    expect(bundle.key_rotations).toHaveLength(1);

    expect(verifyBundle(bundle, { publicKey: oldKey }).failures).toEqual([]);
    expect(verifyBundle(bundle, { publicKey: rotated.newKey }).failures).toEqual([]);
    // Without the statement, a verifier pinning the old key refuses the new key.
    const { key_rotations: _, ...bare } = bundle;
    expect(verifyBundle(bare, { publicKey: oldKey }).ok).toBe(false);
    // A statement signed by a key that is not the pinned one.
    const attacker = generateLogSigner(bundle.origin);
    const forged = signKeyRotation(
      attacker,
      logSignerFromPrivateKey(bundle.origin, new Uint8Array(32).fill(7)),
      4,
    );
    const report = verifyBundle({ ...bundle, key_rotations: [forged] }, { publicKey: oldKey });
    expect(report.failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          check: 'public-key',
          message: expect.stringMatching(/not signed by the key in force/),
        }),
      ]),
    );

    // The retired key put back is refused: the log is bound to the new key.
    const retired = readdirSync(dataDir).find((name) => name.startsWith('log-key.retired-')) as string;
    copyFileSync(join(dataDir, retired), join(dataDir, 'log-key.json'));
    await expect(openLedger(dataDir, undefined, 'test')).rejects.toThrow(/but the log expects log key /);
  });

  it('names the key to pin: the first key, which signed a run recorded before the rotation', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callgate-rotate-'));
    folders.push(dataDir);
    const first = await openLedger(dataDir, undefined, 'test');
    const oldKey = first.signer.verifierKey;
    await first.ledger.append(RUN, { type: 'run-start', principal: 'p', framework: 'test', labels: {} });
    await first.ledger.append(RUN, gap('before'));
    await first.ledger.checkpoint();
    await first.close();
    const rotated = await rotateLogKey(dataDir);

    const second = await openLedger(dataDir, undefined, 'test');
    // Exported before anything is appended under the new key: the old key signed its checkpoint.
    const before = await second.ledger.exportRun(RUN);
    await second.ledger.append('another-run', {
      type: 'run-start',
      principal: 'p',
      framework: 'test',
      labels: {},
    });
    const after = await second.ledger.exportRun('another-run');
    await second.close();

    expect(before.public_key).toBe(rotated.newKey);
    expect(bundleKeys(before)).toEqual({ pin: oldKey, signers: [oldKey], current: rotated.newKey });
    expect(verifyBundle(before, { publicKey: oldKey }).failures).toEqual([]);
    expect(verifyBundle(before, { publicKey: rotated.newKey }).ok).toBe(false);
    // The run recorded after: only the new key signed it, and the first key still verifies it.
    expect(bundleKeys(after)).toEqual({ pin: oldKey, signers: [rotated.newKey], current: rotated.newKey });
    expect(verifyBundle(after, { publicKey: oldKey }).failures).toEqual([]);
    expect(keyToPin(rotated.newKey, after.key_rotations ?? [])).toBe(oldKey);
    expect(keyToPin(oldKey, [])).toBe(oldKey);
  });
});
