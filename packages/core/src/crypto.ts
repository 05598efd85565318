// The one module through which core touches cryptography (node:crypto). Everything else in core
// calls these functions, so the primitives in use are listed in one place: SHA-256, HMAC-SHA256,
// HKDF-SHA256, Ed25519, a CSPRNG and constant-time comparison.
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes as nodeRandomBytes,
  hash as oneShotHash,
  sign,
  timingSafeEqual,
  verify,
} from 'node:crypto';

type Part = string | Uint8Array;

/**
 * The parts as one input of a one-shot hash: the part itself when there is one, else one buffer
 * (a streaming hash object costs more than the copy for the small inputs hashed here).
 */
function joined(parts: readonly Part[]): Part {
  if (parts.length === 1) return parts[0] as Part;
  let length = 0;
  for (const part of parts)
    length += typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length;
  const buffer = Buffer.allocUnsafe(length);
  let at = 0;
  for (const part of parts) {
    if (typeof part === 'string') at += buffer.write(part, at, 'utf8');
    else {
      buffer.set(part, at);
      at += part.length;
    }
  }
  return buffer;
}

/** SHA-256 of the concatenated parts (strings as UTF-8). Returns the 32-byte digest. */
export function sha256(...parts: Part[]): Buffer {
  // Not from Buffer's shared pool: a digest kept for long (a leaf hash) must not keep 8 KiB alive.
  const digest = Buffer.allocUnsafeSlow(32);
  sha256Into(digest, 0, joined(parts));
  return digest;
}

/**
 * Writes SHA-256 of `data` (strings as UTF-8) into `target` at `offset` (32 bytes), for callers
 * hashing many values into one buffer instead of one Buffer each.
 */
export function sha256Into(target: Uint8Array, offset: number, data: Part): void {
  // Node's one-shot hash makes a one-byte string faster than it makes a Buffer (~0.25 µs of ~0.9
  // on a small VM); 'binary' (latin1) maps each byte to one character, exactly.
  const bytes = oneShotHash('sha256', data, 'binary');
  for (let i = 0; i < 32; i++) target[offset + i] = bytes.charCodeAt(i);
}

/** SHA-256 of `data` (strings as UTF-8) as 64 lowercase hex digits. */
export function sha256Hex(data: Part): string {
  return oneShotHash('sha256', data, 'hex');
}

/** `sha256:<hex>` of the given parts (strings as UTF-8). */
export function sha256Digest(...parts: Part[]): string {
  return `sha256:${oneShotHash('sha256', joined(parts), 'hex')}`;
}

/** HMAC-SHA256 (RFC 2104) of `data` under `key`, as 64 lowercase hex digits. */
export function hmacSha256Hex(key: Uint8Array, data: Uint8Array | string): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

/** HMAC-SHA256's block size in bytes (RFC 2104 `B`, SHA-256's 64-byte block). */
const HMAC_BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) under one key, for a key that signs many short messages: the padded key
 * blocks (`K ⊕ ipad`, `K ⊕ opad`) are worked out once, and each message costs two one-shot
 * SHA-256 hashes instead of a new HMAC object. A key longer than the block is hashed first, as
 * RFC 2104 says. Returns a function giving the MAC of `data` as 64 lowercase hex digits, the same
 * as {@link hmacSha256Hex}`(key, data)`; it holds a copy of the key, so later changes to `key` do
 * not reach it.
 */
export function hmacSha256HexKeyed(key: Uint8Array): (data: Uint8Array) => string {
  const material = key.length > HMAC_BLOCK ? sha256(key) : key;
  const inner = Buffer.alloc(HMAC_BLOCK, 0x36);
  // The outer hash's input: the padded key, then the inner digest (32 bytes) written per call.
  const outer = Buffer.alloc(HMAC_BLOCK + 32, 0x5c);
  for (let i = 0; i < material.length; i++) {
    inner[i] = 0x36 ^ (material[i] as number);
    outer[i] = 0x5c ^ (material[i] as number);
  }
  return (data) => {
    const message = Buffer.allocUnsafe(HMAC_BLOCK + data.length);
    inner.copy(message, 0);
    message.set(data, HMAC_BLOCK);
    outer.set(oneShotHash('sha256', message, 'buffer') as unknown as Buffer, HMAC_BLOCK);
    return oneShotHash('sha256', outer, 'hex');
  };
}

/**
 * HKDF-SHA256 (RFC 5869): `length` bytes of output keying material from input keying material
 * `secret`, `salt` and context `info` (strings as UTF-8).
 */
export function hkdfSha256(secret: Uint8Array, salt: Uint8Array, info: string, length: number): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, salt, Buffer.from(info, 'utf8'), length));
}

const POOL_SIZE = 8192;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * `size` bytes from the operating system's CSPRNG. Small requests (salts, ids, tokens) are cut
 * from a pool refilled 8 KiB at a time, so the hot path does not enter the kernel per call; each
 * byte is handed out once and the returned buffer is a copy.
 */
export function randomBytes(size: number): Buffer {
  if (size > 256) return nodeRandomBytes(size);
  if (poolOffset + size > pool.length) {
    pool = nodeRandomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

/** Constant-time equality of two strings or byte arrays; false when lengths differ. */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'utf8') : Buffer.from(a);
  const right = typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b);
  if (left.length !== right.length) {
    // Compare against itself so the time taken does not depend on where the inputs differ.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** An Ed25519 key pair as raw 32-byte seed and 32-byte public key. */
export interface Ed25519KeyPair {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The KeyObject made from each seed array signed with, beside a copy of the seed it was made
 * from: importing an Ed25519 key derives its public key (a scalar multiplication), several times
 * the cost of the signature itself, and a log signs a checkpoint every second with the same key.
 * A seed array changed since is imported again (the copy no longer matches).
 */
const privateKeyObjects = new WeakMap<Uint8Array, { seed: Buffer; key: KeyObject }>();

function privateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new TypeError(`an Ed25519 private key is 32 bytes, got ${seed.length}`);
  const cached = privateKeyObjects.get(seed);
  if (cached !== undefined && timingSafeEqual(cached.seed, seed)) return cached.key;
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  privateKeyObjects.set(seed, { seed: Buffer.from(seed), key });
  return key;
}

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  if (publicKey.length !== 32)
    throw new TypeError(`an Ed25519 public key is 32 bytes, got ${publicKey.length}`);
  return createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]),
    format: 'der',
    type: 'spki',
  });
}

/** A new Ed25519 key pair (RFC 8032). */
export function generateEd25519KeyPair(): Ed25519KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return { privateKey: pkcs8.subarray(pkcs8.length - 32), publicKey: spki.subarray(spki.length - 32) };
}

/** The public key of a 32-byte Ed25519 private key (seed). */
export function ed25519PublicKey(privateKey: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyObject(privateKey)).export({ format: 'der', type: 'spki' });
  return spki.subarray(spki.length - 32);
}

/** Ed25519 signature (64 bytes) of `message` (RFC 8032, pure Ed25519). */
export function ed25519Sign(privateKey: Uint8Array, message: Uint8Array): Uint8Array {
  return sign(null, message, privateKeyObject(privateKey));
}

/** True when `signature` is a valid Ed25519 signature of `message` under `publicKey`. */
export function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
}
