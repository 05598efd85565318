// Test and benchmark helpers: a large exported run, and timings of offline verification and of
// chained appends. They return figures; printing them is the caller's business.
import type { Bundle, RecordBody } from '@callgate/protocol';
import { sha256 } from '../../crypto.js';
import { digestOf } from '../../json/canonical.js';
import { MemoryStore } from '../../store/memory-store.js';
import type { Store } from '../../store/store.js';
import { putPolicyDocument } from '../export.js';
import { Ledger } from '../ledger.js';
import type { LogSigner } from '../signed-note.js';
import { verifyBundle } from '../verify/verify-bundle.js';
import { FIXTURE_ORIGIN, FIXTURE_POLICY, fixtureClock, fixtureSigner } from './fixture.js';

const FIXTURE_POLICY_DIGEST = digestOf(FIXTURE_POLICY);

/** The body of the `index`-th record of a long synthetic run (a decision and its outcome, in turn). */
export function syntheticBody(index: number, policyDigest: string = FIXTURE_POLICY_DIGEST): RecordBody {
  const digest = `sha256:${sha256(`arguments ${index >> 1}`).toString('hex')}`;
  if (index === 0)
    return { type: 'run-start', principal: 'bench', framework: 'bench', labels: { size: 'large' } };
  return index % 2 === 1
    ? {
        type: 'call-decision',
        call_id: `call_${index >> 1}`,
        minted: false,
        attempt: 1,
        tool: 'query_data',
        arguments_digest: digest,
        arguments_commitment: digest,
        effect: 'allow',
        rules: ['reads'],
        reason: 'rule reads allows query_data',
        policy_digest: policyDigest,
      }
    : {
        type: 'call-end',
        call_id: `call_${(index >> 1) - 1}`,
        attempt: 1,
        tool: 'query_data',
        outcome: 'ok',
        arguments_digest: `sha256:${sha256(`arguments ${(index >> 1) - 1}`).toString('hex')}`,
        result_commitment: digest,
        duration_ms: 3,
        grant_consumed: false,
      };
}

/** A bundle of one run of `records` records (JSON round-tripped, as a verifier reads it). */
export async function buildLargeBundle(
  records: number,
  signer: LogSigner = fixtureSigner(),
): Promise<Bundle> {
  const store = new MemoryStore();
  const policyDigest = await putPolicyDocument(store, FIXTURE_POLICY);
  const ledger = await Ledger.open(store, {
    signer,
    origin: FIXTURE_ORIGIN,
    clock: fixtureClock(),
    checkpointEveryRecords: 1_000_000,
    checkpointEveryMs: 3_600_000,
  });
  const runId = '0190f5d2-7a1c-7b3e-9f00-00000000beef';
  for (let from = 0; from < records; from += 1000) {
    const batch: Promise<unknown>[] = [];
    for (let index = from; index < Math.min(records, from + 1000); index++)
      batch.push(ledger.append(runId, syntheticBody(index, policyDigest)));
    await Promise.all(batch);
  }
  const bundle = await ledger.exportRun(runId);
  await ledger.close();
  return JSON.parse(JSON.stringify(bundle)) as Bundle;
}

/** The best of several timed verifications of one bundle. */
export interface VerifyTiming {
  records: number;
  ok: boolean;
  /** Wall time of the fastest round, ms. */
  ms: number;
  recordsPerSecond: number;
  /** CPU time (user + system) of the round that used least, ms: steadier on a shared machine. */
  cpuMs: number;
  recordsPerCpuSecond: number;
}

/** Times `verifyBundle(bundle, { publicKey })` over `rounds` rounds; reports the fastest. */
export function timeVerify(bundle: Bundle, publicKey: string, rounds = 3): VerifyTiming {
  let best = Number.POSITIVE_INFINITY;
  let bestCpu = Number.POSITIVE_INFINITY;
  let ok = false;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    ok = verifyBundle(bundle, { publicKey }).ok;
    const used = process.cpuUsage(cpu);
    best = Math.min(best, performance.now() - started);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
  }
  const records = bundle.records.length;
  return {
    records,
    ok,
    ms: best,
    recordsPerSecond: Math.round((records / best) * 1000),
    cpuMs: bestCpu,
    recordsPerCpuSecond: Math.round((records / bestCpu) * 1000),
  };
}

/** Latency of awaited appends, µs. */
export interface AppendTiming {
  count: number;
  p50: number;
  p99: number;
  mean: number;
}

/**
 * Times `count` appends to one run, each awaited before the next (the latency a single caller
 * sees, group commit of one), after `warmup` untimed ones.
 */
export async function timeAppends(store: Store, count: number, warmup = 1000): Promise<AppendTiming> {
  const ledger = await Ledger.open(store, { signer: fixtureSigner(), origin: FIXTURE_ORIGIN });
  const runId = '0190f5d2-7a1c-7b3e-9f00-00000000cafe';
  const policyDigest = await putPolicyDocument(store, FIXTURE_POLICY);
  const bodies = Array.from({ length: warmup + count }, (_, index) => syntheticBody(index, policyDigest));
  for (let index = 0; index < warmup; index++) await ledger.append(runId, bodies[index] as RecordBody);
  const samples: number[] = [];
  for (let index = warmup; index < warmup + count; index++) {
    const body = bodies[index] as RecordBody;
    const started = performance.now();
    await ledger.append(runId, body);
    samples.push((performance.now() - started) * 1000);
  }
  await ledger.close();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] as number;
  return { count, p50: at(0.5), p99: at(0.99), mean: samples.reduce((sum, value) => sum + value, 0) / count };
}

/** Records per second when `concurrency` appends are in flight at a time (group commit). */
export async function timeAppendThroughput(store: Store, count: number, concurrency = 64): Promise<number> {
  const ledger = await Ledger.open(store, { signer: fixtureSigner(), origin: FIXTURE_ORIGIN });
  const policyDigest = await putPolicyDocument(store, FIXTURE_POLICY);
  const bodies = Array.from({ length: count }, (_, index) => syntheticBody(index, policyDigest));
  const runIds = Array.from(
    { length: concurrency },
    (_, index) => `0190f5d2-7a1c-7b3e-9f00-${String(index).padStart(12, '0')}`,
  );
  const started = performance.now();
  let next = 0;
  await Promise.all(
    runIds.map(async (runId) => {
      while (next < count) await ledger.append(runId, bodies[next++] as RecordBody);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await ledger.close();
  return Math.round(count / seconds);
}
