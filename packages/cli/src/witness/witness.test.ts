import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from '@callgate/core/crypto';
import { addCheckpointBody, verifyBundle, witnessSignerFromPrivateKey } from '@callgate/core/ledger';
import { openLedger } from '@callgate/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { runVerify } from '../commands/verify.js';
import { startWitness } from '../commands/witness.js';
import { startWitnessLoop } from './loop.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
const folder = () => {
  const path = mkdtempSync(join(tmpdir(), 'callgate-witness-'));
  folders.push(path);
  return path;
};
const logger = { debug() {}, info() {}, warn() {}, error() {} };

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('callgate witness serve, and a log that submits to it', () => {
  it('cosigns the log’s checkpoints; exports carry the cosignatures; verify --witness holds; a dead witness is a gap', async () => {
    const opened = await openLedger(folder(), undefined, 'test');
    const witnessData = folder();
    const witness = await startWitness({
      data: witnessData,
      log: [opened.signer.verifierKey],
      name: 'witness.test/w1',
    });
    const loop = startWitnessLoop({
      store: opened.store,
      ledger: opened.ledger,
      witnesses: {
        quorum: 1,
        servers: [
          { url: witness.url, key: witness.verifierKey },
          // nothing listens here: a recorded gap, not a silent skip
          {
            url: 'http://127.0.0.1:9',
            key: witnessSignerFromPrivateKey('witness.test/w2', randomBytes(32)).verifierKey,
          },
        ],
      },
      logger,
      intervalMs: 20,
    });
    try {
      const runId = 'run-witnessed';
      await opened.ledger.append(runId, { type: 'run-start', principal: 'p', framework: 'test', labels: {} });
      for (let round = 0; round < 3; round += 1) {
        for (let index = 0; index < 4; index += 1) {
          await opened.ledger.append(runId, {
            type: 'gap',
            reason: `r${round}.${index}`,
            from_ts: 0,
            to_ts: 1,
            calls: 0,
          });
        }
        const checkpoint = await opened.ledger.checkpoint();
        await until(
          () => loop.witnessing.witnessedSize === checkpoint?.size,
          `size ${checkpoint?.size} witnessed`,
        );
      }
      expect(loop.witnessing.gaps).toEqual([
        expect.objectContaining({
          witness: 'witness.test/w2',
          reason: expect.stringMatching(/^unreachable/),
        }),
      ]);
      const bundle = await opened.ledger.exportRun(runId);
      const pinned = { publicKey: opened.signer.verifierKey, witnesses: [witness.verifierKey] };
      expect(verifyBundle(bundle, pinned).failures).toEqual([]);
      // The CLI, as a user runs it.
      const file = join(folder(), 'bundle.json');
      writeFileSync(file, JSON.stringify(bundle));
      const lines: string[] = [];
      expect(
        await runVerify(file, {
          publicKey: opened.signer.verifierKey,
          witness: [witness.verifierKey],
          out: (line) => lines.push(line),
          err: (line) => lines.push(line),
        }),
      ).toBe(0);
      // Records newer than the last witnessed checkpoint: the export's own checkpoint is not cosigned.
      await opened.ledger.append(runId, { type: 'gap', reason: 'late', from_ts: 0, to_ts: 1, calls: 0 });
      await loop.stop();
      const witnessed = loop.witnessing.witnessedSize;
      const fresh = await opened.ledger.exportRun(runId);
      expect(verifyBundle(fresh, pinned).failures).toEqual([expect.objectContaining({ check: 'witness' })]);
      expect(verifyBundle(fresh, { publicKey: opened.signer.verifierKey }).ok).toBe(true);

      // The witness keeps its state across a restart: it will not cosign from size 0 again.
      await witness.close();
      const again = await startWitness({
        data: witnessData,
        log: [opened.signer.verifierKey],
        name: 'witness.test/w1',
      });
      try {
        expect(again.verifierKey).toBe(witness.verifierKey);
        const latest = await opened.store.latestCheckpoint();
        const answer = await fetch(`${again.url}/add-checkpoint`, {
          method: 'POST',
          body: addCheckpointBody(0, [], latest?.note ?? ''),
        });
        expect(answer.status).toBe(409);
        expect(await answer.text()).toBe(`${witnessed}\n`);
      } finally {
        await again.close();
      }
    } finally {
      await loop.stop();
      await witness.close();
      await opened.close();
    }
  });

  it('answers a checkpoint it fails to handle with a generic 500 and writes the cause to its log', async () => {
    const opened = await openLedger(folder(), undefined, 'test');
    const witnessData = folder();
    const warnings: string[] = [];
    const witness = await startWitness({
      data: witnessData,
      log: [opened.signer.verifierKey],
      warn: (line) => warnings.push(line),
    });
    try {
      await opened.ledger.append('run-x', {
        type: 'run-start',
        principal: 'p',
        framework: 'test',
        labels: {},
      });
      const checkpoint = await opened.ledger.checkpoint();
      // The state file cannot be replaced: a folder stands where it goes.
      mkdirSync(join(witnessData, 'witness-state.json'));
      const answer = await fetch(`${witness.url}/add-checkpoint`, {
        method: 'POST',
        body: addCheckpointBody(0, [], checkpoint?.note ?? ''),
      });
      expect(answer.status).toBe(500);
      const body = (await answer.json()) as { error: { kind: string; message: string } };
      expect(body.error).toEqual({
        kind: 'internal',
        message: 'the witness failed to handle the checkpoint (its log says why)',
      });
      expect(JSON.stringify(body)).not.toContain(witnessData);
      expect(warnings).toEqual([
        expect.stringContaining('callgate witness serve: a checkpoint could not be handled: '),
      ]);
      expect(warnings[0]).toContain(witnessData);
    } finally {
      await witness.close();
      await opened.close();
    }
  });
});
