// C2SP signed notes (c2sp.org/signed-note) with Ed25519 keys, and the checkpoints they carry
// (c2sp.org/tlog-checkpoint). Compatible with Go's golang.org/x/mod/sumdb/note: its keys and notes
// are read and written byte for byte.
import { CallgateError } from '@callgate/protocol';
import { ed25519PublicKey, ed25519Sign, ed25519Verify, generateEd25519KeyPair, sha256 } from '../crypto.js';
import { decodeBase64, encodeBase64 } from './base64.js';
import { HASH_SIZE } from './merkle.js';

/** The signature type byte of Ed25519 in C2SP signed-note. */
const ED25519 = 0x01;
const SIGNATURE_PREFIX = '\u2014 ';
const MAX_SIGNATURES = 100;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** True when `text` holds an ASCII control character other than newline (not allowed in notes). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x0a) return true;
  }
  return false;
}
// Unicode white space (as Go's unicode.IsSpace) and '+' are not allowed in a key name.
const NAME_FORBIDDEN = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]/;

/** A note verifier key, parsed: the key name, its 4-byte key id and 32-byte Ed25519 public key. */
export interface VerifierKey {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
}

/**
 * The key that signs a log's checkpoints: an Ed25519 key pair (32-byte seed, 32-byte public key)
 * under a key name (by convention the log's origin), with its 4-byte key id and its verifier key
 * string, the value users pin.
 */
export interface LogSigner {
  name: string;
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  keyId: Uint8Array;
  verifierKey: string;
}

function invalid(message: string): CallgateError {
  return new CallgateError('request-invalid', message);
}

/**
 * True when `name` can name a key: non-empty, no Unicode white space, no `+`, well-formed
 * (C2SP signed-note "key name").
 */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !NAME_FORBIDDEN.test(name) && !LONE_SURROGATE.test(name);
}

/** The C2SP key id of an Ed25519 key: the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ key). */
export function keyIdOf(name: string, publicKey: Uint8Array): Buffer {
  return sha256(name, '\n', Uint8Array.of(ED25519), publicKey).subarray(0, 4);
}

/**
 * The verifier key string `<name>+<8 hex key id>+<base64(0x01 ‖ public key)>` of an Ed25519 key
 * (C2SP signed-note).
 * @throws CallgateError `request-invalid` for an invalid name or a key that is not 32 bytes.
 */
export function encodeVerifierKey(name: string, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw invalid(`invalid key name ${JSON.stringify(name)}: no spaces or '+'`);
  if (publicKey.length !== 32) throw invalid(`an Ed25519 public key is 32 bytes, got ${publicKey.length}`);
  const typed = Buffer.concat([Uint8Array.of(ED25519), publicKey]);
  return `${name}+${keyIdOf(name, publicKey).toString('hex')}+${encodeBase64(typed)}`;
}

/**
 * Parses a verifier key `<name>+<8 hex key id>+<base64(0x01 ‖ 32-byte Ed25519 key)>`.
 * @throws CallgateError `request-invalid` saying which part is wrong: the name, the key id (not 8
 *   lowercase hex digits, or not the id of this name and key), the base64, the key type (only
 *   Ed25519, 0x01) or the key length.
 */
export function parseVerifierKey(text: string): VerifierKey {
  const first = text.indexOf('+');
  const second = first < 0 ? -1 : text.indexOf('+', first + 1);
  if (second < 0) throw invalid('a verifier key is <name>+<8 hex key id>+<base64 key>');
  const name = text.slice(0, first);
  const id = text.slice(first + 1, second);
  if (!isValidKeyName(name)) throw invalid(`invalid key name ${JSON.stringify(name)} in verifier key`);
  if (!/^[0-9a-f]{8}$/.test(id)) throw invalid(`verifier key id ${JSON.stringify(id)} is not 8 hex digits`);
  const typed = decodeBase64(text.slice(second + 1));
  if (typed === undefined) throw invalid('verifier key: the key is not standard base64');
  if (typed[0] !== ED25519)
    throw invalid(`verifier key: unsupported key type 0x${(typed[0] ?? 0).toString(16)}`);
  const publicKey = typed.subarray(1);
  if (publicKey.length !== 32)
    throw invalid(`verifier key: an Ed25519 key is 32 bytes, got ${publicKey.length}`);
  const keyId = keyIdOf(name, publicKey);
  if (keyId.toString('hex') !== id) throw invalid(`verifier key id ${id} does not match the name and key`);
  return { name, keyId, publicKey };
}

/**
 * The log signer of a 32-byte Ed25519 private key (the RFC 8032 seed) under key `name`.
 * @throws CallgateError `request-invalid` for an invalid name; TypeError for a seed that is not
 *   32 bytes.
 */
export function logSignerFromPrivateKey(name: string, privateKey: Uint8Array): LogSigner {
  const publicKey = ed25519PublicKey(privateKey);
  return {
    name,
    privateKey: Uint8Array.from(privateKey),
    publicKey,
    keyId: keyIdOf(name, publicKey),
    verifierKey: encodeVerifierKey(name, publicKey),
  };
}

/** A log signer with a new random Ed25519 key. */
export function generateLogSigner(name: string): LogSigner {
  return logSignerFromPrivateKey(name, generateEd25519KeyPair().privateKey);
}

/**
 * The signer key string `PRIVATE+KEY+<name>+<8 hex key id>+<base64(0x01 ‖ seed)>` (the format of
 * Go's sumdb/note), for keeping a log's key in a file or a secret store.
 */
export function encodeSignerKey(signer: LogSigner): string {
  const typed = Buffer.concat([Uint8Array.of(ED25519), signer.privateKey]);
  return `PRIVATE+KEY+${signer.name}+${Buffer.from(signer.keyId).toString('hex')}+${encodeBase64(typed)}`;
}

/**
 * Parses a signer key string (see {@link encodeSignerKey}).
 * @throws CallgateError `request-invalid` saying which part is wrong.
 */
export function parseSignerKey(text: string): LogSigner {
  const prefix = 'PRIVATE+KEY+';
  if (!text.startsWith(prefix)) throw invalid('a signer key starts with PRIVATE+KEY+');
  const rest = text.slice(prefix.length);
  const first = rest.indexOf('+');
  const second = first < 0 ? -1 : rest.indexOf('+', first + 1);
  if (second < 0) throw invalid('a signer key is PRIVATE+KEY+<name>+<8 hex key id>+<base64 key>');
  const name = rest.slice(0, first);
  const typed = decodeBase64(rest.slice(second + 1));
  if (typed === undefined || typed[0] !== ED25519 || typed.length !== 33)
    throw invalid('signer key: expected base64 of 0x01 and a 32-byte Ed25519 seed');
  const signer = logSignerFromPrivateKey(name, typed.subarray(1));
  if (Buffer.from(signer.keyId).toString('hex') !== rest.slice(first + 1, second))
    throw invalid('signer key id does not match the name and key');
  return signer;
}

/** One signature line of a note: key name, 4-byte key id and the signature bytes. */
export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

/** A note split into its signed text (ending in a newline) and its signature lines. */
export interface ParsedNote {
  text: string;
  signatures: NoteSignature[];
}

/**
 * Splits a C2SP signed note into text and signatures, checking the syntax only (no signature is
 * verified): text ending in a newline without control characters, a blank line, then 1..100
 * lines `— <key name> <base64(4-byte key id ‖ signature)>`.
 * @throws CallgateError `ledger-invalid` saying what is malformed.
 */
export function parseNote(note: string): ParsedNote {
  const malformed = (why: string) => new CallgateError('ledger-invalid', `malformed signed note: ${why}`);
  if (LONE_SURROGATE.test(note)) throw malformed('not well-formed UTF-8');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw malformed('no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (hasControl(text)) throw malformed('control character in the text');
  if (block.length === 0 || !block.endsWith('\n')) throw malformed('the signatures must end with a newline');
  const signatures: NoteSignature[] = [];
  for (const line of block.slice(0, -1).split('\n')) {
    if (signatures.length === MAX_SIGNATURES) throw malformed(`more than ${MAX_SIGNATURES} signatures`);
    if (!line.startsWith(SIGNATURE_PREFIX)) throw malformed(`signature line does not start with "— "`);
    const body = line.slice(SIGNATURE_PREFIX.length);
    const space = body.indexOf(' ');
    const name = space < 0 ? '' : body.slice(0, space);
    if (!isValidKeyName(name)) throw malformed('signature line without a valid key name');
    const bytes = decodeBase64(body.slice(space + 1));
    if (bytes === undefined || bytes.length < 5) throw malformed(`signature of ${name} is not base64`);
    signatures.push({ name, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) });
  }
  return { text, signatures };
}

/**
 * Signs `text` as a C2SP signed note with one Ed25519 signature line. `text` must be non-empty,
 * end with a newline and hold no blank line or control character (other than newline).
 * @throws CallgateError `request-invalid` for text that cannot be a note.
 */
export function signNote(text: string, signer: LogSigner): string {
  if (!text.endsWith('\n') || text.includes('\n\n') || text === '\n' || hasControl(text))
    throw invalid('note text must end with a newline and hold no blank line or control character');
  if (LONE_SURROGATE.test(text)) throw invalid('note text is not well-formed UTF-8');
  const signature = ed25519Sign(signer.privateKey, Buffer.from(text, 'utf8'));
  const blob = encodeBase64(Buffer.concat([signer.keyId, signature]));
  return `${text}\n${SIGNATURE_PREFIX}${signer.name} ${blob}\n`;
}

/** The result of opening a note or checkpoint: the content, or why it was refused. */
export type Opened<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Verifies a signed note against one verifier key (a `VerifierKey` or its string). Signatures by
 * other keys are ignored; the first signature line naming this key (same name and key id) decides
 * (as Go's note.Open does). Returns the signed text, or a reason: malformed note, no signature by
 * the key, invalid signature. Never throws for a bad note; throws for an unparsable key string.
 */
export function openNote(note: string, key: VerifierKey | string): Opened<string> {
  const verifier = typeof key === 'string' ? parseVerifierKey(key) : key;
  let parsed: ParsedNote;
  try {
    parsed = parseNote(note);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const keyId = Buffer.from(verifier.keyId);
  const line = parsed.signatures.find((s) => s.name === verifier.name && keyId.equals(s.keyId));
  if (line === undefined)
    return { ok: false, reason: `no signature by key ${verifier.name}+${keyId.toString('hex')}` };
  if (!ed25519Verify(verifier.publicKey, Buffer.from(parsed.text, 'utf8'), line.signature))
    return { ok: false, reason: `invalid signature by key ${verifier.name}+${keyId.toString('hex')}` };
  return { ok: true, value: parsed.text };
}

/**
 * A checkpoint (c2sp.org/tlog-checkpoint): the log's origin, its size (number of leaves) and the
 * 32-byte RFC 9162 root of those leaves. `extensions` are any further body lines (kept, unused).
 */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  extensions?: string[];
}

/**
 * The checkpoint body `<origin>\n<size>\n<base64 root>\n` (then any extension lines).
 * @throws CallgateError `request-invalid` for an empty origin or one with a newline, a size that
 *   is not a non-negative safe integer, a root that is not 32 bytes, or an empty extension line.
 */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, root, extensions = [] } = checkpoint;
  if (origin.length === 0 || hasControl(origin) || origin.includes('\n'))
    throw invalid('a checkpoint origin is one non-empty line');
  if (!Number.isSafeInteger(size) || size < 0) throw invalid(`invalid checkpoint size ${size}`);
  if (root.length !== HASH_SIZE) throw invalid(`a checkpoint root is ${HASH_SIZE} bytes`);
  if (extensions.some((line) => line.length === 0 || line.includes('\n')))
    throw invalid('checkpoint extension lines are non-empty single lines');
  return [origin, String(size), encodeBase64(root), ...extensions].map((line) => `${line}\n`).join('');
}

/**
 * Parses a checkpoint body (the signed text of a checkpoint note).
 * @throws CallgateError `ledger-invalid` saying which line is malformed.
 */
export function parseCheckpoint(text: string): Checkpoint {
  const malformed = (why: string) => new CallgateError('ledger-invalid', `malformed checkpoint: ${why}`);
  if (!text.endsWith('\n')) throw malformed('the body must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  const [origin, sizeLine, rootLine, ...extensions] = lines;
  if (origin === undefined || origin.length === 0) throw malformed('empty origin line');
  if (sizeLine === undefined || !/^(?:0|[1-9][0-9]{0,15})$/.test(sizeLine)) throw malformed('bad size line');
  const size = Number(sizeLine);
  if (!Number.isSafeInteger(size)) throw malformed('size beyond 2^53 - 1');
  const root = rootLine === undefined ? undefined : decodeBase64(rootLine);
  if (root === undefined || root.length !== HASH_SIZE) throw malformed('the root line is not a base64 hash');
  if (extensions.some((line) => line.length === 0)) throw malformed('empty extension line');
  return extensions.length > 0 ? { origin, size, root, extensions } : { origin, size, root };
}

/**
 * Signs a checkpoint: the C2SP signed note of its body with the log's Ed25519 key.
 * @returns the note text: body, blank line, `— <key name> <base64(key id ‖ signature)>\n`.
 * @throws CallgateError `request-invalid` for a checkpoint that cannot be formatted.
 */
export function signCheckpoint(checkpoint: Checkpoint, signer: LogSigner): string {
  return signNote(formatCheckpoint(checkpoint), signer);
}

/**
 * Verifies a checkpoint note against a verifier key and parses its body. Returns the checkpoint,
 * or why it was refused (malformed note, missing or invalid signature, malformed body). Never
 * throws for a bad note; throws CallgateError `request-invalid` for an unparsable key string.
 */
export function openCheckpoint(note: string, key: VerifierKey | string): Opened<Checkpoint> {
  const opened = openNote(note, key);
  if (!opened.ok) return opened;
  try {
    return { ok: true, value: parseCheckpoint(opened.value) };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}
