// Ledger record format version 2 and bundle format `callgate-bundle/3`, beside version 1 and
// `callgate-bundle/1` / `/2` (which keep verifying unchanged). See docs/ledger.md, "Record format
// version 2" and "Signed export manifest".
import { z } from 'zod';
import {
  batchInclusionSchema,
  bundleSchema,
  consistencyProofSchema,
  digestSchema,
  openingSchema,
  recordBodySchema,
} from './ledger.js';

/**
 * `hmac-sha256:<64 lowercase hex>`: a keyed digest of caller-supplied values (version 2 records'
 * `arguments_digest`): HMAC-SHA256 (RFC 2104) under the run's key, of the SHA-256 of the value's
 * RFC 8785 canonical JSON. Without the run key a guess cannot be confirmed.
 */
export const keyedDigestSchema = z
  .string()
  .regex(/^hmac-sha256:[0-9a-f]{64}$/, 'expected hmac-sha256:<64 hex digits>');

/**
 * Whether a record field holds a digest of caller-supplied values, keyed in version 2 records:
 * every top-level field whose name ends in `arguments_digest`.
 */
export function isKeyedDigestField(name: string): boolean {
  return name.endsWith('arguments_digest');
}

/**
 * Fields every version 2 record carries. As version 1, except `v: 2` and `prev`: the RFC 9162
 * leaf hash SHA-256(0x00 ‖ canonical bytes) of the run's previous record, as `sha256:<hex>`
 * (one hash per record serves both the chain and the Merkle tree).
 */
const baseV2 = {
  v: z.literal(2),
  seq: z.number().int().min(0),
  run_id: z.string(),
  run_seq: z.number().int().min(0),
  ts: z.number().int(),
  prev: digestSchema.nullable(),
};

type BodySchema = (typeof recordBodySchema.options)[number];

/** A version 1 body's schema with its caller-value digests keyed (see {@link isKeyedDigestField}). */
function keyedBody(body: BodySchema) {
  const replaced: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(body.shape)) {
    if (!isKeyedDigestField(name)) continue;
    const nullable = (field as z.ZodType).safeParse(null).success;
    replaced[name] = nullable ? keyedDigestSchema.nullable() : keyedDigestSchema;
  }
  return body.extend(replaced).extend(baseV2).strict();
}

const bodiesV2 = recordBodySchema.options.map(keyedBody) as unknown as [
  ReturnType<typeof keyedBody>,
  ...ReturnType<typeof keyedBody>[],
];

/** One ledger record, format version 2 (every record type of version 1, keyed digests). */
export const ledgerRecordV2Schema = z.discriminatedUnion('type', bodiesV2);

type KeyDigests<T> = {
  [K in keyof T]: K extends `${string}arguments_digest` ? (null extends T[K] ? string | null : string) : T[K];
};
type BodyOf = z.infer<typeof recordBodySchema>;
/** A version 2 record: a body with the base fields of version 2. */
export type LedgerRecordV2 = BodyOf extends infer B
  ? B extends unknown
    ? KeyDigests<B> & { v: 2; seq: number; run_id: string; run_seq: number; ts: number; prev: string | null }
    : never
  : never;

export const BUNDLE_FORMAT_V3 = 'callgate-bundle/3' as const;

/** A run's key revealed in a bundle: HKDF-SHA256 output, 32 bytes base64url (no padding). */
export const runKeySchema = z.object({ run_id: z.string(), key: z.string() });
export type RunKey = z.infer<typeof runKeySchema>;

/**
 * A bundle (`callgate-bundle/3`): `callgate-bundle/2` with
 * - its file laid out one record a line, each line the record's exact RFC 8785 canonical bytes
 *   (what its leaf hash is over; a line that is not, such as one with a duplicate key, is
 *   refused), `records` last;
 * - `manifest`: a C2SP signed note by the log key over `exported_at`, `synchronous`, the origin,
 *   the record count and each exported run's head (see docs/ledger.md, "Signed export manifest");
 * - `run_keys`: present only when the export reveals them (with openings, or on request), so an
 *   auditor holding the arguments can check the keyed digests.
 */
export const bundleV3Schema = z.object({
  format: z.literal(BUNDLE_FORMAT_V3),
  origin: z.string(),
  public_key: z.string(),
  exported_at: z.number().int(),
  synchronous: z.enum(['NORMAL', 'FULL', 'MEMORY']),
  manifest: z.string(),
  records: z.array(z.unknown()),
  checkpoints: z.array(z.string()),
  consistency: z.array(consistencyProofSchema),
  inclusion: batchInclusionSchema,
  policies: bundleSchema.shape.policies,
  openings: z.array(openingSchema).optional(),
  run_keys: z.array(runKeySchema).optional(),
  key_rotations: z.array(z.string()).optional(),
});
export type BundleV3 = z.infer<typeof bundleV3Schema>;
