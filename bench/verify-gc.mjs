// Garbage collection of `verifyBundleText` on a bundle file's bytes, builds side by side: each
// round runs every build once, each in its own `node --trace-gc` process (so one build's heap
// never holds another's garbage), interleaved; per run it sums the pauses the trace prints
// (Scavenge and Mark-Compact, ms of the main thread) and the process's CPU time of the
// verifications, then prints per build the median and best of the rounds, with the load average.
// Usage: node bench/verify-gc.mjs FILE [--rounds 5] [--verifications 3] NAME=DIR ...
//   DIR: a build's packages/core (its dist/api/ledger.js is loaded), e.g. packages/core, or a
//   build made apart under node_modules/.cache (see bench/results/verify.txt).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

if (process.argv[2] === '--child') {
  const [, , , ledgerJs, file, count] = process.argv;
  const { verifyBundleText } = await import(pathToFileURL(ledgerJs).href);
  const bytes = readFileSync(file);
  const before = process.cpuUsage();
  for (let i = 0; i < Number(count); i++)
    if (!verifyBundleText(bytes).ok) throw new Error(`${file} did not verify`);
  const used = process.cpuUsage(before);
  process.stdout.write(`cpu-ms ${(used.user + used.system) / 1000}\n`);
  process.exit(0);
}

const argument = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const file = process.argv[2];
const rounds = Number(argument('--rounds', '5'));
const verifications = argument('--verifications', '3');
const builds = process.argv
  .slice(3)
  .filter((item) => item.includes('='))
  .map((item) => {
    const [name, dir] = item.split('=');
    return { name, ledgerJs: resolve(dir, 'dist/api/ledger.js'), gc: [], cpu: [], pauses: [] };
  });
if (!file || builds.length === 0) {
  console.error('usage: node bench/verify-gc.mjs FILE [--rounds 5] [--verifications 3] NAME=DIR ...');
  process.exit(2);
}
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
console.log(`${file}, ${verifications} verifications a run, Node ${process.version}, load ${load()}`);
for (let round = 0; round < rounds; round++)
  for (const build of builds) {
    const out = execFileSync(
      process.execPath,
      ['--trace-gc', import.meta.filename, '--child', build.ledgerJs, file, verifications],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    let gc = 0;
    let pauses = 0;
    for (const line of out.split('\n')) {
      const pause = /: (?:Scavenge|Mark-Compact)[^,]*, ([0-9.]+) \//.exec(line);
      if (pause) {
        gc += Number(pause[1]);
        pauses += 1;
      }
    }
    build.gc.push(gc);
    build.pauses.push(pauses);
    build.cpu.push(Number(/cpu-ms ([0-9.]+)/.exec(out)?.[1]));
  }
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const first = builds[0];
console.log(
  'build            GC ms median    best  pauses   CPU ms median    best   GC ÷ first   CPU ÷ first',
);
for (const build of builds)
  console.log(
    `${build.name.padEnd(16)} ${median(build.gc).toFixed(0).padStart(12)} ${Math.min(...build.gc)
      .toFixed(0)
      .padStart(7)} ${String(median(build.pauses)).padStart(7)} ${median(build.cpu)
      .toFixed(0)
      .padStart(14)} ${Math.min(...build.cpu)
      .toFixed(0)
      .padStart(7)} ${(median(build.gc) / median(first.gc)).toFixed(2).padStart(12)} ${(
      median(build.cpu) / median(first.cpu)
    )
      .toFixed(2)
      .padStart(13)}`,
  );
console.log(`load after ${load()}`);
