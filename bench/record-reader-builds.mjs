// The verifier's record-line reader (`readRecordLine`) of several builds side by side, on every record
// line of a bundle file read from its bytes: per line it reads what the record checks read of nearly
// every line (`seq`, `call_id`); the fields a build makes only when read (digests, commitments) are
// left unread, as the verifier leaves them. Rounds interleave the builds (alternating their order);
// µs of CPU per line, median and best, with the load average.
// Usage: node bench/record-reader-builds.mjs FILE DIR... [--rounds 7]
//   DIR: a build's packages/core (its dist/ledger/record-line-reader.js is loaded), e.g. packages/core
//   or one built apart under node_modules/.cache (see bench/results/verify.txt).
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const arguments_ = process.argv.slice(2);
const roundsAt = arguments_.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Number(arguments_.splice(roundsAt, 2)[1]) : 7;
const [file, ...dirs] = arguments_;
if (!file || dirs.length === 0) {
  console.error('usage: node bench/record-reader-builds.mjs FILE DIR... [--rounds 7]');
  process.exit(2);
}
const readers = await Promise.all(
  dirs.map(
    async (dir) =>
      (await import(pathToFileURL(resolve(dir, 'dist/ledger/record-line-reader.js')).href)).readRecordLine,
  ),
);
const bytes = readFileSync(file);
// Record lines: after line 1, up to the closing `]}`, each but the last ending `,`.
const starts = [];
const ends = [];
for (let start = bytes.indexOf(10) + 1; ; ) {
  const stop = bytes.indexOf(10, start);
  if (stop < 0 || bytes[start] === 93) break;
  starts.push(start);
  ends.push(bytes[stop - 1] === 44 ? stop - 1 : stop);
  start = stop + 1;
}
const count = starts.length;
let sink = 0;
const times = dirs.map(() => []);
const load = () => loadavg()[0].toFixed(2);
console.log(`${count} record lines of ${file}, Node ${process.version}, load before ${load()}`);
for (let round = 0; round < rounds; round++)
  for (let k = 0; k < readers.length; k++) {
    const which = round % 2 ? readers.length - 1 - k : k;
    const read = readers[which];
    const cpu = process.cpuUsage();
    for (let i = 0; i < count; i++) {
      const fields = read(bytes, starts[i], ends[i]);
      if (fields === undefined) continue;
      sink += fields.seq;
      if (typeof fields.call_id === 'string') sink += fields.call_id.length;
    }
    const used = process.cpuUsage(cpu);
    times[which].push((used.user + used.system) / count);
  }
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
console.log('build                                              µs/line median     best   ÷ first');
for (const [which, dir] of dirs.entries()) {
  const middle = median(times[which]);
  const best = Math.min(...times[which]);
  const ratio = middle / median(times[0]);
  console.log(
    `${dir.padEnd(50)} ${middle.toFixed(3).padStart(14)} ${best.toFixed(3).padStart(8)} ${ratio.toFixed(2).padStart(9)}`,
  );
}
console.log(`load after ${load()} (sink ${sink % 7})`);
