// Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by area (package, node
// internals, GC, idle) and the heaviest functions, as percentages of the profile's busy time.
// `node bench/cpuprofile-summary.mjs FILE.cpuprofile [--top 30]`
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/cpuprofile-summary.mjs FILE.cpuprofile [--top N]');
  process.exit(2);
}
const topIndex = process.argv.indexOf('--top');
const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 30;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
const deltas = profile.timeDeltas;
for (let index = 0; index < profile.samples.length; index++) {
  const id = profile.samples[index];
  self.set(id, (self.get(id) ?? 0) + (deltas[index] ?? 0));
}

function area(frame) {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)') return 'program (native, outside JS)';
  if (!url) return functionName ? `native: ${functionName}` : 'native';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1];
  const workspace = /packages\/([^/]+)\//.exec(url);
  if (workspace) return `@callgate/${workspace[1]}`;
  if (url.startsWith('node:')) return `node: ${url.slice(5).split('/')[0]}`;
  return url.split('/').slice(-2).join('/');
}

const areas = new Map();
const functions = new Map();
let busy = 0;
for (const [id, time] of self) {
  const frame = byId.get(id).callFrame;
  const name = area(frame);
  if (name !== 'idle') busy += time;
  areas.set(name, (areas.get(name) ?? 0) + time);
  const key = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + time);
}
const percent = (time) => `${((time / busy) * 100).toFixed(1).padStart(5)} %`;
console.log(`${file}: busy ${(busy / 1e3).toFixed(0)} ms (idle excluded)`);
console.log('\nself time by area');
for (const [name, time] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  if (name !== 'idle') console.log(`${percent(time)}  ${name}`);
}
console.log('\nheaviest functions (self time)');
for (const [name, time] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${percent(time)}  ${name}`);
}
