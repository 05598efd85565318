import { describe, expect, it } from 'vitest';
import * as api from './ledger.js';

describe('@callgate/core/ledger public API', () => {
  it('exports exactly the pinned names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "CompactRange",
        "KEY_ROTATIONS_META_KEY",
        "Ledger",
        "MemoryWitnessState",
        "VERIFY_CHECKS",
        "Witness",
        "Witnessing",
        "addCheckpointBody",
        "addCosignatures",
        "cosign",
        "encodeSignerKey",
        "encodeVerifierKey",
        "followKeyRotations",
        "formatCheckpoint",
        "generateLogSigner",
        "leafHash",
        "logSignerFromPrivateKey",
        "merkleRoot",
        "nodeHash",
        "noteCosignatures",
        "openCheckpoint",
        "openKeyRotation",
        "parseCheckpoint",
        "parseSignerKey",
        "parseVerifierKey",
        "parseWitnessKey",
        "putPolicyDocument",
        "sealRecord",
        "signCheckpoint",
        "signKeyRotation",
        "timelineOf",
        "verifyBundle",
        "verifyConsistency",
        "verifyInclusion",
        "witnessSignerFromPrivateKey",
      ]
    `);
  });
});
