// Measurement helpers for the benchmarks: latency percentiles of sequential operations and
// sustained throughput of concurrent ones. Figures are microseconds and operations per second.
import { cpus, loadavg } from 'node:os';

/** Percentile `p` (0–100) of sorted numbers. */
function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** { p50_us, p99_us, p999_us, per_second } of `samples` (µs each) taken in `totalUs` µs in all. */
function summary(samples, totalUs) {
  samples.sort();
  return {
    p50_us: round(percentile(samples, 50)),
    p99_us: round(percentile(samples, 99)),
    p999_us: round(percentile(samples, 99.9)),
    per_second: Math.round((samples.length / totalUs) * 1e6),
  };
}

/**
 * Runs `operation` `iterations` times in sequence after `warmup` runs and returns
 * { p50_us, p99_us, p999_us, per_second } (per_second from the mean).
 */
export async function latency(operation, { iterations = 20_000, warmup = 2_000 } = {}) {
  for (let i = 0; i < warmup; i++) await operation(i);
  const samples = new Float64Array(iterations);
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await operation(warmup + i);
    samples[i] = Number(process.hrtime.bigint() - t0) / 1_000;
  }
  return summary(samples, Number(process.hrtime.bigint() - started) / 1_000);
}

/** Synchronous variant of {@link latency} for operations that do not return a promise. */
export function latencySync(operation, { iterations = 200_000, warmup = 20_000 } = {}) {
  for (let i = 0; i < warmup; i++) operation(i);
  const samples = new Float64Array(iterations);
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    operation(warmup + i);
    samples[i] = Number(process.hrtime.bigint() - t0) / 1_000;
  }
  return summary(samples, Number(process.hrtime.bigint() - started) / 1_000);
}

/** Runs `operation` from `concurrency` loops for `seconds`; returns operations per second. */
export async function throughput(operation, { concurrency = 64, seconds = 3 } = {}) {
  const deadline = performance.now() + seconds * 1_000;
  let count = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await operation(count++);
      }
    }),
  );
  return Math.round((count / (performance.now() - started)) * 1_000);
}

function round(value) {
  return Math.round(value * 100) / 100;
}

/** The machine a figure came from. */
export function machine() {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    node: process.version,
    date: new Date().toISOString(),
  };
}

/**
 * The 1-minute load average now: how busy the machine was while a figure was taken (above the
 * number of cores, other work was competing for them and every figure is pessimistic).
 */
export function load() {
  return Math.round(loadavg()[0] * 100) / 100;
}
