// Golden wire files: what callgate wrote once must verify and parse with today's code. A failure
// here means a durable format changed: make the change a new version instead.
import { readFileSync } from 'node:fs';
import { canonicalJson } from '@callgate/core/crypto';
import { verifyBundle } from '@callgate/core/ledger';
import { bundleSchema, ledgerRecordSchema, RECORD_TYPES } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';

const read = (name: string) => readFileSync(new URL(`../fixtures/wire/${name}`, import.meta.url), 'utf8');
const bundle = JSON.parse(read('bundle-v1.json'));
const publicKey = read('bundle-v1.public-key.txt').trim();

describe('golden callgate-bundle/1', () => {
  it('verifies offline, strictly, against its pinned key', () => {
    const report = verifyBundle(bundle, { publicKey, strict: true });
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.records).toBe(bundle.records.length);
  });

  it('parses with the protocol schemas, record by record, and keeps its canonical bytes', () => {
    expect(bundleSchema.safeParse(bundle).success).toBe(true);
    const types = new Set<string>();
    for (const record of bundle.records) {
      const parsed = ledgerRecordSchema.parse(record);
      types.add(parsed.type);
      expect(canonicalJson(parsed)).toBe(canonicalJson(record));
    }
    // Record types added to format version 1 after the golden file was written (additively).
    const later = new Set(['refusal', 'effective-arguments']);
    expect([...types].sort()).toEqual([...RECORD_TYPES].filter((type) => !later.has(type)).sort());
  });

  it('fails once any byte of a record changes', () => {
    const tampered = structuredClone(bundle);
    tampered.records[3].ts += 1;
    expect(verifyBundle(tampered, { publicKey }).ok).toBe(false);
  });
});
