// The verifier's one input rule (verifyBundleBytes: empty, byte-order mark, UTF-8 and JSON checks
// before verifyBundleText) against verifyBundleText alone, on the same bundle file's bytes,
// interleaved round by round in one process; the best of each is printed with the ratio
// (with the rule ÷ without, in CPU time) and the load average from `uptime`.
// Usage: node bench/verify-input.mjs FILE [--rounds 5]
//   (a file from `node bench/verify.mjs --only v2-plain --write DIR`)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { verifyBundleBytes, verifyBundleText } from '@callgate/core/ledger';

const file = process.argv[2];
const at = process.argv.indexOf('--rounds');
const rounds = at > 0 ? Number(process.argv[at + 1]) : 5;
const bytes = readFileSync(file);
const load = () => execFileSync('uptime').toString().trim();

/** CPU ms of one call of `run`. */
function cpu(run) {
  const start = process.cpuUsage();
  const result = run();
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, result };
}

console.log(`uptime before: ${load()}`);
const best = { text: Number.POSITIVE_INFINITY, bytes: Number.POSITIVE_INFINITY };
for (let round = 0; round < rounds; round++) {
  for (const [name, run] of round % 2 === 0
    ? [
        ['text', () => verifyBundleText(bytes)],
        ['bytes', () => verifyBundleBytes(bytes)],
      ]
    : [
        ['bytes', () => verifyBundleBytes(bytes)],
        ['text', () => verifyBundleText(bytes)],
      ]) {
    const { ms, result } = cpu(run);
    const ok = name === 'text' ? result.ok : result.readable && result.report.ok;
    if (!ok) throw new Error(`${name}: the bundle did not verify`);
    best[name] = Math.min(best[name], ms);
  }
}
console.log(`${(bytes.length / 1e6).toFixed(1)} MB, best of ${rounds} (CPU ms):`);
console.log(`  verifyBundleText (no input rule)   ${best.text.toFixed(0)}`);
console.log(`  verifyBundleBytes (input rule)     ${best.bytes.toFixed(0)}`);
console.log(`  ratio with ÷ without               ${(best.bytes / best.text).toFixed(3)}`);
console.log(`uptime after: ${load()}`);
