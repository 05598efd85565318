// Witness cosignatures (c2sp.org/tlog-cosignature, Ed25519 `cosignature/v1`): a witness's
// timestamped statement that a checkpoint is the largest consistent tree head it has seen for
// the log. A cosignature is one more signature line on the checkpoint's signed note, so a note
// with cosignatures still opens under the log's key (other keys' lines are ignored).

import { CallgateError } from '@callgate/protocol';
import { ed25519PublicKey, ed25519Sign, ed25519Verify, sha256 } from '../../crypto.js';
import { isValidKeyName, type NoteSignature, parseNote } from '../signed-note.js';

/** The vkey signature type of an Ed25519 cosigner (tlog-cosignature). */
const COSIGNATURE_TYPE = 0x04;
const SIGNATURE_PREFIX = '\u2014 ';

/** A witness's public identity: its name, key id and 32-byte Ed25519 public key. */
export interface WitnessKey {
  name: string;
  keyId: Buffer;
  publicKey: Uint8Array;
}

/** A witness's signing key. */
export interface WitnessSigner extends WitnessKey {
  privateKey: Uint8Array;
  /** The vkey `<name>+<8 hex key id>+<base64(0x04 ‖ public key)>` verifiers pin. */
  verifierKey: string;
}

function invalid(why: string): CallgateError {
  return new CallgateError('request-invalid', why);
}

/** SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4]. */
export function cosignatureKeyId(name: string, publicKey: Uint8Array): Buffer {
  return sha256(name, '\n', Uint8Array.of(COSIGNATURE_TYPE), publicKey).subarray(0, 4);
}

/** A witness signer from a 32-byte Ed25519 seed. @throws CallgateError `request-invalid` for a bad name. */
export function witnessSignerFromPrivateKey(name: string, privateKey: Uint8Array): WitnessSigner {
  if (!isValidKeyName(name)) throw invalid(`invalid witness name ${JSON.stringify(name)}: no spaces or '+'`);
  const publicKey = ed25519PublicKey(privateKey);
  const keyId = cosignatureKeyId(name, publicKey);
  const typed = Buffer.concat([Uint8Array.of(COSIGNATURE_TYPE), publicKey]);
  return {
    name,
    keyId,
    publicKey,
    privateKey,
    verifierKey: `${name}+${keyId.toString('hex')}+${typed.toString('base64')}`,
  };
}

/**
 * Parses a witness vkey `<name>+<8 hex key id>+<base64(0x04 ‖ 32-byte key)>`.
 * @throws CallgateError `request-invalid` saying what is wrong.
 */
export function parseWitnessKey(text: string): WitnessKey {
  const first = text.indexOf('+');
  const second = text.indexOf('+', first + 1);
  if (first < 0 || second < 0)
    throw invalid(`a witness key is <name>+<key id>+<key>, got ${JSON.stringify(text)}`);
  const name = text.slice(0, first);
  const id = text.slice(first + 1, second);
  const encoded = text.slice(second + 1);
  if (!isValidKeyName(name)) throw invalid(`invalid witness name in ${JSON.stringify(text)}`);
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== 33 || bytes[0] !== COSIGNATURE_TYPE) {
    throw invalid(`witness key ${name}: not an Ed25519 cosigner key (type 0x04, 32 bytes)`);
  }
  const publicKey = new Uint8Array(bytes.subarray(1));
  const keyId = cosignatureKeyId(name, publicKey);
  if (keyId.toString('hex') !== id) throw invalid(`witness key ${name}: key id ${id} does not match the key`);
  return { name, keyId, publicKey };
}

/**
 * The first witness listed twice in `keys` — under the same name, or the same public key under two
 * names — as `[first index, second index]`, else undefined. A quorum counts distinct witnesses: a
 * key given twice would let one witness's cosignature meet a quorum of two.
 */
export function repeatedWitness(keys: readonly WitnessKey[]): [number, number] | undefined {
  const seen = new Map<string, number>();
  for (const [index, key] of keys.entries()) {
    for (const identity of [`name ${key.name}`, `key ${Buffer.from(key.publicKey).toString('hex')}`]) {
      const first = seen.get(identity);
      if (first !== undefined) return [first, index];
      seen.set(identity, index);
    }
  }
  return undefined;
}

function signedMessage(body: string, timestamp: number): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${timestamp}\n${body}`, 'utf8');
}

/**
 * The cosignature line `— <name> <base64(key id ‖ u64 timestamp ‖ signature)>\n` over a checkpoint
 * body (its note text without signatures), at `timestamp` (POSIX seconds).
 */
export function cosign(body: string, signer: WitnessSigner, timestamp: number): string {
  const stamp = Buffer.alloc(8);
  stamp.writeBigUInt64BE(BigInt(timestamp));
  const signature = ed25519Sign(signer.privateKey, signedMessage(body, timestamp));
  return `${SIGNATURE_PREFIX}${signer.name} ${Buffer.concat([signer.keyId, stamp, signature]).toString('base64')}\n`;
}

/** A verified cosignature: the witness's name and the POSIX time it cosigned at. */
export interface Cosignature {
  witness: string;
  timestamp: number;
}

function verifyLine(body: string, line: NoteSignature, key: WitnessKey): Cosignature | undefined {
  if (line.name !== key.name || !key.keyId.equals(line.keyId) || line.signature.length !== 72)
    return undefined;
  const timestamp = Buffer.from(line.signature.subarray(0, 8)).readBigUInt64BE();
  if (timestamp > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  const seconds = Number(timestamp);
  return ed25519Verify(key.publicKey, signedMessage(body, seconds), line.signature.subarray(8))
    ? { witness: key.name, timestamp: seconds }
    : undefined;
}

/**
 * The valid cosignatures on a checkpoint note by the given witnesses (at most one per witness;
 * lines by other keys are ignored). Never throws: a malformed note has none.
 */
export function noteCosignatures(note: string, witnesses: readonly WitnessKey[]): Cosignature[] {
  // A witness counts once however often its key is listed (a quorum counts witnesses).
  const signers = new Set<string>();
  let parsed: ReturnType<typeof parseNote>;
  try {
    parsed = parseNote(note);
  } catch {
    return [];
  }
  const found: Cosignature[] = [];
  for (const key of witnesses) {
    const signer = Buffer.from(key.publicKey).toString('hex');
    if (signers.has(signer)) continue;
    for (const line of parsed.signatures) {
      const valid = verifyLine(parsed.text, line, key);
      if (valid) {
        found.push(valid);
        signers.add(signer);
        break;
      }
    }
  }
  return found;
}

/**
 * Adds cosignature lines (as a witness returns them) to a checkpoint note, skipping lines the
 * note already has. @throws CallgateError `ledger-invalid` when a line is not a note signature.
 */
export function addCosignatures(note: string, lines: string): string {
  const have = new Set(note.split('\n'));
  let result = note;
  for (const line of lines.split('\n')) {
    if (line === '') continue;
    if (!line.startsWith(SIGNATURE_PREFIX))
      throw new CallgateError('ledger-invalid', `not a cosignature line: ${line}`);
    if (!have.has(line)) result += `${line}\n`;
  }
  parseNote(result);
  return result;
}
