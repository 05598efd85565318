// Where a call's time goes inside the gateway: preloaded into the bench's gateway processes
// (`BENCH_CHILD_FLAGS="--import ./bench/call-phases.mjs" node bench/gateway.mjs ...`), it stamps
// every tools/call (performance.now(), µs) as it passes: received (node:http server 'request'),
// decide start and end (Engine.decide), forwarded (the upstream request sent), upstream answered
// (its response read), record start and end (Engine.recordOutcome, which resolves once the
// call-end record is durable) and answered (the gateway's response finished). It prints to
// stderr, every `CALL_PHASES_EVERY_MS` ms (default 2,500: one latency window of the gateway bench),
// p50 / p99 / max of each phase over the calls that ended in that interval, with their rate.
// The stamps follow each HTTP request through AsyncLocalStorage, which costs a little itself:
// a diagnosis, not the figure (bench/gateway.mjs without the preload gives that).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { pathToFileURL } from 'node:url';

const argument = (name) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const role = argument('--module') ? 'baseline' : (argument('--role') ?? 'process');
const every = Number(process.env.CALL_PHASES_EVERY_MS ?? 2_500);

if (role === 'gateway' || role === 'baseline') {
  const require = createRequire(import.meta.url);
  const http = require('node:http');
  const calls = new AsyncLocalStorage();
  let done = [];

  // Received and answered: the server's 'request' event, and its response's 'finish'.
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...rest) {
    if (event !== 'request') return emit.call(this, event, ...rest);
    const [request, response] = rest;
    const stamps = { received: performance.now() };
    response.once('finish', () => {
      stamps.answered = performance.now();
      if (stamps.decideStart !== undefined && stamps.recordEnd !== undefined) done.push(stamps);
    });
    return calls.run(stamps, () => emit.call(this, event, request, response));
  };

  // Forwarded and upstream answered: the upstream request (node:http's request, also as the
  // gateway's ESM import sees it), sent and its response read to the end.
  const send = http.request;
  http.request = function (...args) {
    const stamps = calls.getStore();
    const request = send.apply(this, args);
    if (stamps && stamps.decideEnd !== undefined && stamps.forwarded === undefined) {
      stamps.forwarded = performance.now();
      request.once('response', (response) => {
        stamps.upstreamHeaders = performance.now();
        response.once('end', () => {
          stamps.upstreamAnswered = performance.now();
        });
      });
    }
    return request;
  };
  syncBuiltinESMExports();

  // Decided and recorded: the engine's decide and recordOutcome, on the core the gateway loads.
  const module = argument('--module');
  const core = await import(
    module ? pathToFileURL(createRequire(module).resolve('@callgate/core')).href : '@callgate/core'
  );
  const wrap = (name, start, end) => {
    const original = core.Engine.prototype[name];
    core.Engine.prototype[name] = async function (...args) {
      const stamps = calls.getStore();
      if (stamps) stamps[start] = performance.now();
      try {
        return await original.apply(this, args);
      } finally {
        if (stamps) stamps[end] = performance.now();
      }
    };
  };
  wrap('decide', 'decideStart', 'decideEnd');
  wrap('recordOutcome', 'recordStart', 'recordEnd');

  const phases = [
    ['received → decide', 'received', 'decideStart'],
    ['decide', 'decideStart', 'decideEnd'],
    ['decided → forwarded', 'decideEnd', 'forwarded'],
    ['forwarded → upstream headers', 'forwarded', 'upstreamHeaders'],
    ['upstream headers → body read', 'upstreamHeaders', 'upstreamAnswered'],
    ['upstream read → record', 'upstreamAnswered', 'recordStart'],
    ['record (call-end durable)', 'recordStart', 'recordEnd'],
    ['recorded → answered', 'recordEnd', 'answered'],
    ['in the gateway, all', 'received', 'answered'],
    ['… of which the gateway itself', null, null],
  ];
  const percentile = (sorted, p) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const report = () => {
    const window = done;
    done = [];
    if (window.length === 0) return;
    const lines = phases.map(([label, from, to]) => {
      const values = window
        .map((s) =>
          from === null ? s.answered - s.received - (s.upstreamAnswered - s.forwarded) : s[to] - s[from],
        )
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      if (values.length === 0) return `  ${label.padEnd(32)} —`;
      const us = (ms) => Math.round(ms * 1000);
      return `  ${label.padEnd(32)} p50 / p99 / max µs ${us(percentile(values, 50))} / ${us(percentile(values, 99))} / ${us(values[values.length - 1])}`;
    });
    process.stderr.write(
      `${role} call phases, ${window.length} calls (${Math.round(window.length / (every / 1000))}/s):\n${lines.join('\n')}\n`,
    );
  };
  setInterval(report, every).unref();
  process.once('exit', report);
}
