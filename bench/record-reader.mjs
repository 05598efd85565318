// The verifier's record-line reader against the path it replaces, for each record line of a bundle
// file read from its bytes:
//   (i)  the reference: the line's latin1 text, JSON.parse + canonical check (`parseRecordLine`) +
//        shape check (`isLedgerRecord`, compiled from zod) — what a line the reader is not sure of
//        still goes through;
//   (ii) the reader built into the verifier (packages/core dist, `readRecordLine`): one pass over the
//        line's bytes checking canonical form and shape, handing over only the fields the record
//        checks read (HANDED_OVER_FIELDS), no record object.
// Both run over the same lines, interleaved, several rounds; µs of CPU per line, the ratio and the
// load average are printed, after checking that every line the reader accepts the reference accepts
// with the same handed-over fields. (The standalone prototype whose figure chose this design,
// 0.46–0.48× the reference, is this file at commit 5e4103a; the reader it became is in core.)
//
// Usage: node bench/record-reader.mjs FILE [--rounds 7]
//   FILE: a bundle file in the one-record-a-line layout, e.g. DIR/v2-plain.json after
//   `node bench/verify.mjs --records 100000 --rounds 1 --write DIR`.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(pathToFileURL(resolve(root, 'packages/core/dist', path)).href);
const { parseRecordLine } = await dist('ledger/bundle-text.js');
const { isLedgerRecord } = await dist('ledger/record-validator.js');
const { readRecordLine, HANDED_OVER_FIELDS } = await dist('ledger/record-line-reader.js');

{
  const file = process.argv[2];
  if (!file) throw new Error('usage: node bench/record-reader.mjs FILE [--rounds 7]');
  const at = process.argv.indexOf('--rounds');
  const rounds = at > 0 ? Number(process.argv[at + 1]) : 7;
  const bytes = readFileSync(file);
  // Record lines: after line 1, up to the closing `]}`, each but the last ending `,`.
  const starts = [];
  const ends = [];
  let start = bytes.indexOf(10) + 1;
  for (;;) {
    const stop = bytes.indexOf(10, start);
    if (stop < 0 || bytes[start] === 93) break;
    starts.push(start);
    ends.push(bytes[stop - 1] === 44 ? stop - 1 : stop);
    start = stop + 1;
  }
  const count = starts.length;
  let totalBytes = 0;
  for (let i = 0; i < count; i++) totalBytes += ends[i] - starts[i];

  // Agreement first: every line the reader accepts, the reference accepts, with the same fields.
  let unsure = 0;
  for (let i = 0; i < count; i++) {
    const record = parseRecordLine(bytes.latin1Slice(starts[i], ends[i]), i + 2);
    const handed = readRecordLine(bytes, starts[i], ends[i]);
    if (handed === undefined) {
      unsure += 1;
      continue;
    }
    if (!isLedgerRecord(record))
      throw new Error(`line ${i + 2}: the reader accepts what the shape check does not`);
    for (const field of HANDED_OVER_FIELDS) {
      if (handed[field] === undefined || record[field] === undefined) continue;
      if (typeof handed[field] !== 'object' && handed[field] !== record[field])
        throw new Error(`line ${i + 2}: ${field} differs: ${handed[field]} vs ${record[field]}`);
    }
  }

  let sink = 0;
  const today = () => {
    for (let i = 0; i < count; i++) {
      const record = parseRecordLine(bytes.latin1Slice(starts[i], ends[i]), i + 2);
      if (isLedgerRecord(record)) sink += record.seq;
    }
  };
  const built = () => {
    for (let i = 0; i < count; i++) {
      const record = readRecordLine(bytes, starts[i], ends[i]);
      if (record !== undefined) sink += record.seq;
      else {
        const parsed = parseRecordLine(bytes.latin1Slice(starts[i], ends[i]), i + 2);
        if (isLedgerRecord(parsed)) sink += parsed.seq;
      }
    }
  };
  const time = (run) => {
    const cpu = process.cpuUsage();
    run();
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / count; // µs of CPU per line
  };
  const load = () => loadavg()[0].toFixed(2);
  console.log(
    `record lines of ${file}: ${count}, mean ${(totalBytes / count).toFixed(0)} bytes; reader not sure of ${unsure}`,
  );
  console.log(`Node ${process.version}, load before ${load()}; µs of CPU per line, interleaved rounds`);
  console.log('round   reference (parse+canonical+shape)   reader   ratio   load');
  const a = [];
  const q = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which runs first, so that neither always gets the warmer or quieter slot.
    const first = round % 2 === 0;
    const x = first ? time(today) : undefined;
    const w = time(built);
    const z = first ? x : time(today);
    a.push(z);
    q.push(w);
    console.log(
      `${String(round + 1).padStart(5)}   ${z.toFixed(3).padStart(33)}   ${w.toFixed(3).padStart(6)}   ${(w / z).toFixed(2).padStart(5)}   ${load()}`,
    );
  }
  const best = (values) => Math.min(...values);
  const median = (values) => [...values].sort((p, q) => p - q)[Math.floor(values.length / 2)];
  console.log(
    `best: reference ${best(a).toFixed(3)} µs, reader ${best(q).toFixed(3)} µs (ratio ${(best(q) / best(a)).toFixed(2)}, median ${median(q.map((w, i) => w / a[i])).toFixed(2)}); load after ${load()} (sink ${sink % 7})`,
  );
}
