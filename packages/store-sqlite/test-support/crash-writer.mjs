// The writer half of crash.test.ts, run as a plain Node process against the BUILT packages
// (`tsc -b packages/store-sqlite` first). It appends chained ledger records in batches, as fast as
// it can, and after each `appendRecords` resolves prints the batch's seqs to stdout, one a line:
// a printed seq is an acknowledged record. It never stops by itself; the test kills it (SIGKILL).
//
// Usage: node crash-writer.mjs <database path> <NORMAL|FULL>
// A database that already holds records is continued: each run resumes from its head.
import { canonicalJson, sha256 } from '@callgate/core/crypto';
import { SqliteStore } from '@callgate/store-sqlite';

const [databasePath, synchronous] = process.argv.slice(2);
if (!databasePath || (synchronous !== 'NORMAL' && synchronous !== 'FULL')) {
  process.stderr.write('usage: node crash-writer.mjs <database path> <NORMAL|FULL>\n');
  process.exit(2);
}

// A short checkpoint interval, so kills also land during background checkpoints.
const store = SqliteStore.open(databasePath, { synchronous, walCheckpointIntervalMs: 5 });
const runIds = Array.from({ length: 8 }, (_, index) => `run-${index}`);
const heads = new Map();
for (const runId of runIds) {
  const head = await store.runHead(runId);
  if (head) heads.set(runId, head);
}
let seq = await store.ledgerSize();

const digestOf = (text) => `sha256:${sha256(text).toString('hex')}`;

function nextRecord(runId) {
  const head = heads.get(runId);
  const body = head
    ? {
        type: 'gap',
        // Records of varied size (up to ~2 KB) so the WAL grows and checkpoints have work.
        reason: `load ${seq} ${'·'.repeat((seq * 37) % 700)}`,
        from_ts: seq,
        to_ts: seq + 1,
        calls: seq % 5,
      }
    : { type: 'run-start', principal: 'crash-test', framework: 'node', labels: { mode: synchronous } };
  const record = {
    v: 1,
    seq,
    run_id: runId,
    run_seq: head ? head.run_seq + 1 : 0,
    ts: Date.now(),
    prev: head ? head.digest : null,
    ...body,
  };
  const canonical = canonicalJson(record);
  const stored = {
    record,
    canonical,
    leaf_hash: sha256(Uint8Array.of(0), canonical),
    digest: digestOf(canonical),
  };
  heads.set(runId, { run_seq: record.run_seq, digest: stored.digest });
  seq += 1;
  return stored;
}

for (let batchNumber = 0; ; batchNumber += 1) {
  const batchSize = 1 + ((batchNumber * 7919) % 16);
  const batch = Array.from({ length: batchSize }, (_, index) =>
    nextRecord(runIds[(batchNumber * 3 + index * 5) % runIds.length]),
  );
  await store.appendRecords(batch);
  // stdout to a pipe is synchronous on Linux: once written, the parent can read it.
  process.stdout.write(`${batch.map((stored) => stored.record.seq).join('\n')}\n`);
  // Let timers (the background checkpoint) run now and then.
  if (batchNumber % 4 === 3) await new Promise((resolve) => setImmediate(resolve));
}
