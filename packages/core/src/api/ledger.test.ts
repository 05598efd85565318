import { describe, expect, it } from 'vitest';
import * as api from './ledger.js';

describe('@callgate/core/ledger public API', () => {
  it('exports exactly the pinned names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "ARGUMENTS_SECRET_META_KEY",
        "CompactRange",
        "KEY_ROTATIONS_META_KEY",
        "Ledger",
        "MemoryWitnessState",
        "VERIFY_CHECKS",
        "Witness",
        "Witnessing",
        "addCheckpointBody",
        "addCosignatures",
        "argumentsDigest",
        "argumentsDigestOf",
        "bundleKeys",
        "cosign",
        "deriveRunKey",
        "encodeSignerKey",
        "encodeVerifierKey",
        "followKeyRotations",
        "formatCheckpoint",
        "generateLogSigner",
        "keyToPin",
        "keyedArgumentsDigest",
        "leafHash",
        "logSignerFromPrivateKey",
        "merkleRoot",
        "nodeHash",
        "noteCosignatures",
        "openCheckpoint",
        "openKeyRotation",
        "parseBundleText",
        "parseCheckpoint",
        "parseSignerKey",
        "parseVerifierKey",
        "parseWitnessKey",
        "putPolicyDocument",
        "sealRecord",
        "serializeBundle",
        "signCheckpoint",
        "signKeyRotation",
        "timelineOf",
        "verifyBundle",
        "verifyBundleBytes",
        "verifyBundleText",
        "verifyConsistency",
        "verifyInclusion",
        "witnessSignerFromPrivateKey",
      ]
    `);
  });
});
