// What a stdio client's line costs the gateway before and after the line size limit
// (line-splitter.ts), side by side: (1) the time per line of small messages through the line
// filter and the stdio transport (alternating rounds, median of each); (2) the peak resident
// memory of a process fed one 20 MiB `ping` line in 64 KiB chunks, then a small ping, each
// build in its own process, alternating.
// Run after `npm run build`: `node bench/stdio-lines.mjs --before <dist of the old build> [--rounds 21]`
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : fallback;
};
const rounds = Number(argument('--rounds', '9'));
const afterDist = resolve(import.meta.dirname, '../packages/mcp-gateway/dist');
const beforeDist = argument('--before', undefined);
if (!beforeDist) throw new Error('--before <dist folder of the old build> is required');

/** Child mode: feed one big line, print the peak RSS in MiB. */
if (process.argv.includes('--child')) {
  const dist = argument('--child', '');
  const { jsonRpcLineFilter } = await import(pathToFileURL(`${dist}/jsonrpc-errors.js`).href);
  const { LosslessStdioServerTransport } = await import(pathToFileURL(`${dist}/stdio-transport.js`).href);
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  stdout.resume();
  const filter = jsonRpcLineFilter((line) => stdout.write(line), 4 * 1024 * 1024);
  const transport = new LosslessStdioServerTransport(stdin.pipe(filter), stdout, 4 * 1024 * 1024);
  let got = 0;
  transport.onmessage = () => got++;
  transport.onerror = () => {};
  await transport.start();
  const chunk = Buffer.alloc(64 * 1024, 'x');
  stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
  for (let index = 0; index < 320; index++) {
    stdin.write(chunk);
    await new Promise((wake) => setImmediate(wake));
  }
  stdin.write('"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  for (let wait = 0; wait < 200 && got === 0; wait++) await new Promise((wake) => setTimeout(wake, 10));
  process.stdout.write(`${(process.resourceUsage().maxRSS / 1024).toFixed(0)}\n`);
  process.exit(0);
}

async function builds(dist) {
  const { jsonRpcLineFilter } = await import(pathToFileURL(`${dist}/jsonrpc-errors.js`).href);
  const { LosslessStdioServerTransport } = await import(pathToFileURL(`${dist}/stdio-transport.js`).href);
  return async (lines) => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    stdout.resume();
    const filter = jsonRpcLineFilter((line) => stdout.write(line), 4 * 1024 * 1024);
    const transport = new LosslessStdioServerTransport(stdin.pipe(filter), stdout, 4 * 1024 * 1024);
    let got = 0;
    const done = new Promise((finish) => {
      transport.onmessage = () => {
        if (++got === lines.length) finish();
      };
    });
    await transport.start();
    const started = performance.now();
    stdin.write(lines.join(''));
    await done;
    return (performance.now() - started) / lines.length;
  };
}

const count = 5_000;
const lines = Array.from({ length: count }, (_, index) =>
  index % 2
    ? `{"jsonrpc":"2.0","id":${index},"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/data/notes.txt","tail":20}}}\n`
    : `{"jsonrpc":"2.0","id":${index},"method":"ping"}\n`,
);
const run = { before: await builds(beforeDist), after: await builds(afterDist) };
const times = { before: [], after: [] };
await run.before(lines.slice(0, 500));
await run.after(lines.slice(0, 500));
for (let round = 0; round < rounds; round++)
  for (const side of round % 2 ? ['after', 'before'] : ['before', 'after'])
    times[side].push(await run[side](lines));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const memory = { before: [], after: [] };
for (let round = 0; round < 3; round++)
  for (const side of round % 2 ? ['after', 'before'] : ['before', 'after']) {
    const child = spawnSync(
      process.execPath,
      [import.meta.filename, '--before', beforeDist, '--child', side === 'before' ? beforeDist : afterDist],
      {
        encoding: 'utf8',
      },
    );
    memory[side].push(Number(child.stdout.trim()));
  }
const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(' ');
console.log(`load average ${load}; ${rounds} rounds of ${count} lines, medians`);
console.log(
  `time per small line: before ${(median(times.before) * 1000).toFixed(1)} µs, after ${(median(times.after) * 1000).toFixed(1)} µs, after/before ${(median(times.after) / median(times.before)).toFixed(2)}`,
);
console.log(
  `peak RSS fed a 20 MiB line (MiB, 3 processes each): before ${memory.before.join(' ')}, after ${memory.after.join(' ')}`,
);
