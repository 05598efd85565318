import { describe, expect, it } from 'vitest';
import { sha256 } from '../../crypto.js';
import { MemoryStore } from '../../store/memory-store.js';
import { Ledger } from '../ledger.js';
import { MerkleTree } from '../proofs.js';
import { generateLogSigner, signCheckpoint } from '../signed-note.js';
import { noteCosignatures, parseWitnessKey, witnessSignerFromPrivateKey } from './cosignature.js';
import { addCheckpointBody, MemoryWitnessState, Witness } from './witness.js';

const ORIGIN = 'callgate.test/witnessed';

async function log() {
  const signer = generateLogSigner(ORIGIN);
  const store = new MemoryStore();
  const ledger = await Ledger.open(store, { signer, origin: ORIGIN });
  const grow = async (count: number) => {
    for (let index = 0; index < count; index += 1) {
      await ledger.append('run-1', {
        type: 'gap',
        reason: `r${ledger.size}`,
        from_ts: 0,
        to_ts: 1,
        calls: 0,
      });
    }
    const checkpoint = await ledger.checkpoint();
    if (!checkpoint) throw new Error('no checkpoint');
    return checkpoint;
  };
  return { signer, store, ledger, grow };
}

function witnessFor(logKey: string) {
  const signer = witnessSignerFromPrivateKey('witness.test/w1', sha256('w1'));
  return new Witness({
    signer,
    logs: { [ORIGIN]: logKey },
    state: new MemoryWitnessState(),
    clock: () => 1_700_000_000,
  });
}

describe('witness add-checkpoint (c2sp.org/tlog-witness)', () => {
  it('cosigns a first checkpoint, then only consistent growth; its lines verify under its vkey', async () => {
    const { signer, grow, store } = await log();
    const witness = witnessFor(signer.verifierKey);
    const first = await grow(3);
    const answer = await witness.addCheckpoint(addCheckpointBody(0, [], first.note));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/^\u2014 witness\.test\/w1 [A-Za-z0-9+/=]+\n$/);
    const key = parseWitnessKey(witness.verifierKey);
    expect(noteCosignatures(first.note + answer.body, [key])).toEqual([
      { witness: 'witness.test/w1', timestamp: 1_700_000_000 },
    ]);
    const second = await grow(4);
    const proof = new MerkleTree(await store.readLeafHashes(0, 7)).consistencyProof(3, 7);
    expect((await witness.addCheckpoint(addCheckpointBody(3, proof, second.note))).status).toBe(200);
    expect(await witness.latest(ORIGIN)).toMatchObject({ size: 7 });
  });

  it('refuses a rollback, a fork of the same size, a stale old size, a foreign key and an unknown log', async () => {
    const { signer, grow } = await log();
    const witness = witnessFor(signer.verifierKey);
    const first = await grow(5);
    await witness.addCheckpoint(addCheckpointBody(0, [], first.note));
    // stale: the client thinks the witness never saw the log
    const stale = await witness.addCheckpoint(addCheckpointBody(0, [], first.note));
    expect(stale).toMatchObject({ status: 409, body: '5\n', contentType: 'text/x.tlog.size' });
    // a smaller tree (rollback): old size beyond the checkpoint
    const other = await log();
    const smaller = await other.grow(2);
    const rollback = signCheckpoint({ origin: ORIGIN, size: 2, root: Buffer.from(smaller.root) }, signer);
    expect((await witness.addCheckpoint(addCheckpointBody(5, [], rollback))).status).toBe(400);
    // another tree of the same size, re-signed with the log's own key
    const forked = await other.grow(3);
    const fork = signCheckpoint({ origin: ORIGIN, size: 5, root: Buffer.from(forked.root) }, signer);
    expect((await witness.addCheckpoint(addCheckpointBody(5, [], fork))).status).toBe(422);
    // signed by another key
    expect((await witness.addCheckpoint(addCheckpointBody(5, [], forked.note))).status).toBe(403);
    // an origin the witness does not know
    const unknown = signCheckpoint(
      { origin: 'elsewhere/log', size: 5, root: Buffer.from(forked.root) },
      signer,
    );
    expect((await witness.addCheckpoint(addCheckpointBody(5, [], unknown))).status).toBe(404);
    expect((await witness.addCheckpoint('old x\n\n')).status).toBe(400);
    expect(await witness.latest(ORIGIN)).toMatchObject({ size: 5 });
  });
});
