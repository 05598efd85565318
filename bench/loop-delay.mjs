// Where a server process's latency tail comes from: preloaded into the bench's child processes
// (`BENCH_CHILD_FLAGS="--import ./bench/loop-delay.mjs" node bench/gateway.mjs ...`), it prints
// to stderr, every `LOOP_DELAY_EVERY_MS` ms (default 2,500, one latency window of the gateway
// bench) and once more at exit, the event loop's delay (perf_hooks monitorEventLoopDelay, 1 ms
// resolution: p50 / p99 / max, ms) beside the garbage collector's pauses in the same interval
// (PerformanceObserver 'gc': count, total and longest pause per kind, and how many took over
// 2 ms) and the heap in use. A loop delay whose p99 and max match the longest GC pauses is the
// collector's; one far above them is the process's own work (or the machine's load).
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const every = Number(process.env.LOOP_DELAY_EVERY_MS ?? 2_500);
const argument = (name) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
// The bench's children: `upstream`, `gateway`, and `baseline` for a gateway from `--module`.
const role = argument('--module') ? 'baseline' : (argument('--role') ?? 'process');
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let pauses = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push([kinds[entry.detail?.kind] ?? 'other', entry.duration]);
}).observe({ entryTypes: ['gc'] });

const ms = (ns) => (ns / 1e6).toFixed(1);
function report(label) {
  const byKind = new Map();
  for (const [kind, duration] of pauses) {
    const figures = byKind.get(kind) ?? { count: 0, total: 0, longest: 0, over2: 0 };
    figures.count++;
    figures.total += duration;
    figures.longest = Math.max(figures.longest, duration);
    if (duration > 2) figures.over2++;
    byKind.set(kind, figures);
  }
  const gc = [...byKind]
    .map(
      ([kind, f]) =>
        `${kind} ${f.count}× ${f.total.toFixed(1)} ms (longest ${f.longest.toFixed(1)}, >2 ms ${f.over2})`,
    )
    .join(', ');
  process.stderr.write(
    `${role} ${label}: loop delay p50 / p99 / max ${ms(delay.percentile(50))} / ${ms(delay.percentile(99))} / ${ms(delay.max)} ms; gc ${gc || 'none'}; heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB\n`,
  );
  delay.reset();
  pauses = [];
}
setInterval(() => report('interval'), every).unref();
process.once('exit', () => report('exit'));
