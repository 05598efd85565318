// The RFC 9162 leaf hash SHA-256(0x00 ‖ record line) of every record line of a bundle file
// (written by `node bench/verify.mjs --write DIR`), per leaf, by four ways of calling node:crypto,
// interleaved, best of 5 rounds in CPU time: what the verifier does (one-shot crypto.hash of a
// scratch copy, digest read as a latin1 string) against a Buffer digest and streaming hashes.
// Usage: node bench/leaf-hash.mjs DIR/v2-plain.json
import { createHash, hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { load } from './measure.mjs';

const bytes = readFileSync(process.argv[2]);
// Each record line's bounds, its trailing `,` excluded; the lines end at the closing `]}`.
const starts = [];
const ends = [];
for (let start = bytes.indexOf(10) + 1; bytes[start] !== 93; ) {
  const stop = bytes.indexOf(10, start);
  starts.push(start);
  ends.push(bytes[stop - 1] === 44 ? stop - 1 : stop);
  start = stop + 1;
}
const count = starts.length;
const out = Buffer.alloc(32 * count);
const zero = Buffer.from([0]);
const scratch = Buffer.allocUnsafeSlow(1 << 16);
/** 0x00 ‖ line `i`, in the scratch buffer. */
const prefixed = (i) => {
  scratch[0] = 0;
  bytes.copy(scratch, 1, starts[i], ends[i]);
  return scratch.subarray(0, ends[i] - starts[i] + 1);
};
const variants = {
  'one-shot crypto.hash of a scratch copy, latin1 digest (the verifier)': (i) => {
    const digest = hash('sha256', prefixed(i), 'binary');
    for (let k = 0; k < 32; k++) out[i * 32 + k] = digest.charCodeAt(k);
  },
  'one-shot crypto.hash of a scratch copy, Buffer digest': (i) => {
    out.set(hash('sha256', prefixed(i), 'buffer'), i * 32);
  },
  'createHash, update(0x00), update(the line in place), no copy': (i) => {
    out.set(createHash('sha256').update(zero).update(bytes.subarray(starts[i], ends[i])).digest(), i * 32);
  },
  'createHash, one update of a scratch copy': (i) => {
    out.set(createHash('sha256').update(prefixed(i)).digest(), i * 32);
  },
};
const best = {};
for (let round = 0; round < 5; round++) {
  for (const [name, leaf] of Object.entries(variants)) {
    const cpu = process.cpuUsage();
    for (let i = 0; i < count; i++) leaf(i);
    const used = process.cpuUsage(cpu);
    best[name] = Math.min(best[name] ?? Number.POSITIVE_INFINITY, (used.user + used.system) / count);
  }
}
console.log(`leaf hashes of ${count} record lines, Node ${process.version}, load ${load()}`);
for (const [name, micros] of Object.entries(best)) console.log(`${micros.toFixed(3)} µs/leaf  ${name}`);
