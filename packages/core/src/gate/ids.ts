import { randomBytes } from '../crypto.js';

let lastMs = -1;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562 §5.7): 48-bit Unix ms timestamp, version 7, a 12-bit counter that keeps ids
 * minted in the same millisecond in order, variant 10, then 62 random bits.
 */
export function uuidv7(now: number = Date.now()): string {
  if (now === lastMs) {
    sequence = (sequence + 1) & 0xfff;
  } else {
    lastMs = now;
    sequence = randomBytes(2).readUInt16BE(0) & 0x7ff;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A call id minted for a call the model gave none: `cg-` and 16 hex digits (64 random bits). */
export function mintCallId(): string {
  return `cg-${randomBytes(8).toString('hex')}`;
}

/** An approval id: `ap-` and a UUIDv7, so approvals sort by creation. */
export function approvalId(now?: number): string {
  return `ap-${uuidv7(now)}`;
}
