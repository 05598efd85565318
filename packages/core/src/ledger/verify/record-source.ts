// Where the verifier's record pass reads the records from: a parsed bundle's array
// ({@link ParsedRecords}), or a bundle file's record lines read one at a time (see
// `bundle-lines.ts`), so that no array of all parsed records is ever held. Both hash each record's
// canonical bytes into the leaves buffer: RFC 9162 leaf hash SHA-256(0x00 ‖ bytes), and for a
// version 1 record its chain digest SHA-256(bytes) (a version 2 record's chain digest is its leaf
// hash).
import type { LedgerRecord } from '@callgate/protocol';
import { sha256Into } from '../../crypto.js';
import { canonicalOfParsed } from '../plain-canonical.js';

/** The records of a bundle, as the record pass reads them. */
export interface RecordSource {
  /** How many records the bundle has. */
  readonly count: number;
  /**
   * Record `index` (0-based) as parsed. The pass reads each record once, in order; a record may be
   * read again later (to name it in a failure).
   * @throws CallgateError `ledger-invalid` for a file's record line that is not its record's
   *   RFC 8785 canonical JSON (then the whole file is refused, naming the line).
   */
  read(index: number): unknown;
  /**
   * When the source can vouch for record `index` without parsing it (a file line the no-object
   * reader is certain of), the fields the record checks read; else undefined (use `read`).
   */
  readChecked?(index: number): LedgerRecord | undefined;
  /**
   * Whether the `prev` of the record `readChecked` handed over last is `sha256:` and the lowercase
   * hex of the 32 bytes of `digests` at `offset` (compared without making its text); only right
   * after `readChecked` answered fields.
   */
  prevNamesDigest?(digests: Uint8Array, offset: number): boolean;
  /**
   * Writes the leaf hash of record `index` (`item`, as just read) into `leaves` at 32·index, and
   * when it is version 1 (`version2` false) its chain digest into `chain` at 32·index.
   * @throws CallgateError `tool-args-invalid` when the record has no canonical JSON form.
   */
  hash(
    index: number,
    item: unknown,
    version2: boolean,
    leaves: Uint8Array,
    chain: Uint8Array | undefined,
  ): void;
}

/** A reused buffer of 0x00 ‖ a record's canonical bytes, grown as needed. */
let scratch = Buffer.allocUnsafeSlow(4096);

/**
 * Hashes a record's canonical text (see the file comment) into `leaves` (and, for version 1,
 * `chain`) at byte `offset`.
 */
export function hashCanonicalText(
  canonical: string,
  version2: boolean,
  leaves: Uint8Array,
  chain: Uint8Array | undefined,
  offset: number,
): void {
  const most = canonical.length * 3 + 1;
  if (most > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.max(most, scratch.length * 2));
  scratch[0] = 0;
  const length = scratch.write(canonical, 1, 'utf8') + 1;
  sha256Into(leaves, offset, scratch.subarray(0, length));
  if (!version2 && chain !== undefined) sha256Into(chain, offset, scratch.subarray(1, length));
}

/**
 * The records of a parsed bundle; `lines`, when given, are their canonical texts (a file's lines
 * read losslessly), hashed as they are; else each record's canonical form is made
 * (`canonicalOfParsed`).
 */
export class ParsedRecords implements RecordSource {
  constructor(
    readonly records: readonly unknown[],
    readonly lines?: readonly string[],
  ) {}

  get count(): number {
    return this.records.length;
  }

  read(index: number): unknown {
    return this.records[index];
  }

  hash(
    index: number,
    item: unknown,
    version2: boolean,
    leaves: Uint8Array,
    chain: Uint8Array | undefined,
  ): void {
    hashCanonicalText(this.lines?.[index] ?? canonicalOfParsed(item), version2, leaves, chain, index * 32);
  }
}
