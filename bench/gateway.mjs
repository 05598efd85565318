// Benchmark of the MCP gateway (DESIGN §7: latency added over a direct upstream call at 500
// calls/s ≤ 0.5 ms p50 and ≤ 2 ms p99; throughput ≥ 0.5× direct). One upstream MCP server (a
// one-tool echo server, Streamable HTTP) runs in its own process; the gateway runs in another, in
// front of it, deciding and recording every call (engine on a MemoryStore, ledger on); this
// process drives a lean MCP client against both:
//   1. latency at 100, 500 and 1,000 calls/s (`--rates 100,500,1000`; open loop, 4 × 2.5 s
//      windows each), direct and through the gateway, alternated; the figure is the difference of
//      the percentiles. A run that cannot hold its rate is marked saturated;
//   2. highest throughput (closed loop, 16 in flight, 2 × 2 s windows, alternated) through the
//      gateway as a ratio of direct, and the CPU time per call of the gateway's process and of
//      the upstream's (on the direct path: what serving one MCP call costs).
// Run after `npm run build`: `node bench/gateway.mjs [--quick] [--rates 100,500,1000] [--json]`
// `--rates none` skips the latency part; `--throughput-rounds N` alternates N closed-loop windows
// per path (default 2; more gives a steadier CPU-per-call comparison on a busy machine).
// `--store memory|sqlite|sqlite-full` picks the engine's store (default memory; sqlite is a
// fresh data folder as `callgate serve` opens it, synchronous NORMAL or FULL).
// `--baseline PATH` adds a third path, interleaved with the other two: a gateway built from the
// module at PATH (e.g. the package's `dist/index.js` compiled from an earlier commit), on the
// @callgate/core (engine, store, ledger) that module itself resolves: a baseline built in a whole
// tree of an earlier commit measures that commit's core as well.
// The load average (1 min) is printed beside each rate: the machine may be shared.
// (BENCH_CHILD_FLAGS="--cpu-prof" passes flags to the upstream and gateway processes;
// BENCH_GATEWAY_FLAGS to the gateway under test only, not to the baseline).
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const argument = (name) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const role = argument('--role');

async function listen(fetch, cleanup = async () => {}) {
  const { serve } = await import('@hono/node-server');
  const server = serve({ hostname: '127.0.0.1', port: 0, fetch });
  await new Promise((ready) => server.once('listening', ready));
  console.log(`PORT ${server.address().port}`);
  const stop = () => server.close(() => cleanup().finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
}

/** The upstream: one tool, `echo`, over stateful Streamable HTTP. */
async function upstream() {
  const { randomUUID } = await import('node:crypto');
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { WebStandardStreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
  );
  const { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } = await import(
    '@modelcontextprotocol/sdk/types.js'
  );
  const sessions = new Map();
  await listen(async (request) => {
    const id = request.headers.get('mcp-session-id');
    if (id)
      return sessions.get(id)?.handleRequest(request) ?? new Response('unknown session', { status: 404 });
    const body = await request.json();
    if (!isInitializeRequest(body)) return new Response('initialize first', { status: 400 });
    const server = new Server({ name: 'bench-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: 'echo',
          description: 'Echoes its text',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          annotations: { readOnlyHint: true },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => ({
      content: [{ type: 'text', text: String(call.params.arguments?.text ?? '') }],
    }));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
    });
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  });
}

/**
 * Imports `specifier` as the module `--module` would resolve it (the baseline's own @callgate
 * packages), or as this file does when there is none.
 */
async function importBeside(specifier) {
  const module = argument('--module');
  if (!module) return import(specifier);
  const { createRequire } = await import('node:module');
  return import(pathToFileURL(createRequire(module).resolve(specifier)).href);
}

/** An engine on a MemoryStore (`--store memory`, the default). */
async function memoryEngine(core, policy) {
  const { generateEd25519KeyPair } = await importBeside('@callgate/core/crypto');
  const { Ledger, logSignerFromPrivateKey } = await importBeside('@callgate/core/ledger');
  const store = new core.MemoryStore();
  const keys = generateEd25519KeyPair();
  const origin = 'bench.local/log';
  const ledger = await Ledger.open(store, {
    signer: logSignerFromPrivateKey(origin, keys.privateKey),
    origin,
  });
  return { engine: new core.Engine({ store, ledger, policy }), close: async () => {} };
}

/**
 * An engine on a SQLite data folder in a fresh temporary directory, as `callgate serve` runs
 * (`--store sqlite`, `synchronous` NORMAL; `--store sqlite-full` for FULL). Removed at the end.
 */
async function sqliteEngine(policy, synchronous) {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { openEmbedded } = await importBeside('@callgate/store-sqlite');
  const dataDir = await mkdtemp(join(tmpdir(), 'callgate-bench-gateway-'));
  const embedded = await openEmbedded({ dataDir, policy, synchronous, init: true });
  return {
    engine: embedded.engine,
    close: async () => {
      await embedded.close().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The gateway in front of `--upstream`, with an engine on the store `--store` names. */
async function gateway() {
  const core = await importBeside('@callgate/core');
  const module = argument('--module');
  const { createGateway } = await import(module ? pathToFileURL(module).href : '@callgate/mcp-gateway');
  const policy = core.loadPolicy(`
version: 1
default: deny
rules:
  - id: reads
    match: { annotations: { readOnlyHint: true } }
    effect: allow
`);
  const kind = argument('--store') ?? 'memory';
  const { engine, close } =
    kind === 'memory'
      ? await memoryEngine(core, policy)
      : await sqliteEngine(policy, kind === 'sqlite-full' ? 'FULL' : 'NORMAL');
  const instance = createGateway({
    engine,
    upstreams: [{ name: 'bench', http: { url: argument('--upstream') } }],
  });
  const [state] = await instance.start();
  if (state?.status !== 'connected') throw new Error(`upstream not connected: ${JSON.stringify(state)}`);
  await listen(
    (request) => instance.handleRequest(request, { principal: 'bench', profile: 'full' }),
    async () => {
      await instance.close();
      await close();
    },
  );
}

function child(args) {
  const flags = process.env.BENCH_CHILD_FLAGS ? process.env.BENCH_CHILD_FLAGS.split(' ') : [];
  // Flags for the gateway under test alone (not the upstream, not the baseline): an A/B of a V8
  // flag against `--baseline` set to the same build.
  if (process.env.BENCH_GATEWAY_FLAGS && args[1] === 'gateway' && !args.includes('--module'))
    flags.push(...process.env.BENCH_GATEWAY_FLAGS.split(' '));
  const process_ = spawn(process.execPath, [...flags, self, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  process_.stderr.on('data', (chunk) => process.stderr.write(`[${args[1]}] ${chunk}`));
  return new Promise((resolve, reject) => {
    let seen = '';
    process_.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /PORT (\d+)/.exec(seen);
      if (match)
        resolve({
          url: `http://127.0.0.1:${match[1]}/mcp`,
          pid: process_.pid,
          stop: () => process_.stdin.end(),
        });
    });
    process_.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
const round = (value) => Math.round(value * 10) / 10;

/**
 * A lean MCP client over Streamable HTTP (kept-alive node:http, one POST per call, the SSE or
 * JSON answer read whole): the same for both paths, and light enough that the load generator
 * is not what limits the rate. Returns `call(i)` resolving with the latency in µs.
 */
async function connect(url) {
  const http = await import('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  let session;
  const post = (message, retried = false) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(message);
      const request = http.request(url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          'mcp-protocol-version': '2025-11-25',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
      });
      request.once('error', (error) => {
        // A kept-alive connection the server closed while idle: send again, once.
        if (request.reusedSocket && error.code === 'ECONNRESET' && !retried)
          post(message, true).then(resolve, reject);
        else reject(error);
      });
      request.once('response', (response) => {
        session ??= response.headers['mcp-session-id'];
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode >= 400) return reject(new Error(`HTTP ${response.statusCode}: ${text}`));
          if (!('id' in message)) return resolve(undefined);
          const lines = text.startsWith('{')
            ? [text]
            : text
                .split('\n')
                .filter((line) => line.startsWith('data: '))
                .map((line) => line.slice(6));
          const answer = lines.map((line) => JSON.parse(line)).find((item) => item.id === message.id);
          if (!answer || answer.error || answer.result?.isError) reject(new Error(`call failed: ${text}`));
          else resolve(answer.result);
        });
      });
      request.end(body);
    });
  await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'bench-client', version: '1.0.0' },
    },
  });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 1;
  const call = async (i) => {
    const t0 = process.hrtime.bigint();
    await post({
      jsonrpc: '2.0',
      id: id++,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: `call ${i}` } },
    });
    return Number(process.hrtime.bigint() - t0) / 1e3;
  };
  for (let i = 0; i < 500; i++) await call(i); // warm-up
  return { call, close: () => agent.destroy() };
}

/** Open loop: `rate` calls per second for `seconds`; latencies in µs, and how many failed. */
async function openLoop(call, rate, seconds) {
  const total = Math.round(rate * seconds);
  const samples = [];
  const pending = [];
  let failed = 0;
  const started = process.hrtime.bigint();
  let sent = 0;
  while (sent < total) {
    const due = Number(process.hrtime.bigint() - started) / 1e9;
    while (sent < total && sent / rate <= due) {
      pending.push(
        call(sent++).then(
          (us) => samples.push(us),
          () => failed++,
        ),
      );
    }
    await new Promise((wake) => setTimeout(wake, 1));
  }
  await Promise.all(pending);
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return { samples, failed, achieved: samples.length / elapsed };
}

/** Closed loop: `concurrency` callers for `seconds`; returns calls per second. */
async function closedLoop(call, concurrency, seconds) {
  const deadline = performance.now() + seconds * 1_000;
  let count = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        if (
          await call(count).then(
            () => true,
            () => false,
          )
        )
          count++;
      }
    }),
  );
  return count / ((performance.now() - started) / 1_000);
}

/** CPU time (user + system) of process `pid` in ms, from /proc (Linux); undefined elsewhere. */
async function cpuMs(pid) {
  try {
    const { readFile } = await import('node:fs/promises');
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

function summary(run) {
  const sorted = Float64Array.from(run.samples).sort();
  return {
    p50_us: round(percentile(sorted, 50)),
    p99_us: round(percentile(sorted, 99)),
    calls: sorted.length,
    failed: run.failed,
    achieved_per_second: Math.round(run.achieved),
  };
}

/** The paths in round `round`'s order: direct first, then the others, reversed every other round. */
const ordered = (paths, round) => [
  paths[0],
  ...(round % 2 === 0 ? paths.slice(1) : paths.slice(1).reverse()),
];

async function main() {
  const quick = process.argv.includes('--quick');
  const ratesText = argument('--rates') ?? argument('--rate') ?? '100,500,1000';
  const rates = ratesText === 'none' ? [] : ratesText.split(',').map(Number);
  // Absolute: the child resolves @callgate/core beside it (createRequire needs an absolute path).
  const baselineModule =
    argument('--baseline') && (await import('node:path')).resolve(argument('--baseline'));
  const up = await child(['--role', 'upstream']);
  const store = ['--store', argument('--store') ?? 'memory'];
  const gw = await child(['--role', 'gateway', '--upstream', up.url, ...store]);
  const base = baselineModule
    ? await child(['--role', 'gateway', '--upstream', up.url, ...store, '--module', baselineModule])
    : undefined;
  // Each path: its client, and the process whose CPU is its cost (the upstream's, for direct).
  const paths = [
    { name: 'direct', client: await connect(up.url), pid: up.pid },
    { name: 'gateway', client: await connect(gw.url), pid: gw.pid },
    ...(base ? [{ name: 'baseline', client: await connect(base.url), pid: base.pid }] : []),
  ];
  // Short windows, alternated, so that a change of the machine's load falls on every path alike.
  const seconds = quick ? 1 : 2.5;
  const rounds = quick ? 2 : 4;
  const result = {
    rates_per_second: rates,
    node: process.version,
    store: store[1],
    ...(baselineModule ? { baseline: baselineModule } : {}),
  };
  for (const rate of rates) {
    const load = Math.round(loadavg()[0] * 100) / 100;
    const runs = Object.fromEntries(
      paths.map((path) => [path.name, { samples: [], failed: 0, achieved: 0 }]),
    );
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const path of ordered(paths, round_)) {
        const run = await openLoop(path.client.call, rate, seconds);
        runs[path.name].samples.push(...run.samples);
        runs[path.name].failed += run.failed;
        runs[path.name].achieved += run.achieved / rounds;
      }
    }
    const figures = { load };
    const d = summary(runs.direct);
    let saturated = d.failed > 0 || d.achieved_per_second < rate * 0.95;
    figures.direct = d;
    for (const path of paths.slice(1)) {
      const g = summary(runs[path.name]);
      figures[path.name] = {
        ...g,
        added: { p50_us: round(g.p50_us - d.p50_us), p99_us: round(g.p99_us - d.p99_us) },
      };
      saturated ||= g.failed > 0 || g.achieved_per_second < rate * 0.95;
    }
    figures.saturated = saturated;
    result[`at_${rate}_per_second`] = figures;
  }
  // Highest throughput, closed loop, alternated as well; CPU per call of each path's process.
  const throughputSeconds = quick ? 1.5 : 2;
  const throughputRounds = Number(argument('--throughput-rounds') ?? (quick ? 1 : 2));
  const totals = Object.fromEntries(paths.map((path) => [path.name, { calls: 0, seconds: 0, cpuMs: 0 }]));
  for (let round_ = 0; round_ < throughputRounds; round_++) {
    for (const path of ordered(paths, round_)) {
      const before = await cpuMs(path.pid);
      const started = performance.now();
      const rate = await closedLoop(path.client.call, 16, throughputSeconds);
      const elapsed = (performance.now() - started) / 1_000;
      const after = await cpuMs(path.pid);
      totals[path.name].calls += rate * elapsed;
      totals[path.name].seconds += elapsed;
      if (before !== undefined && after !== undefined) totals[path.name].cpuMs += after - before;
    }
  }
  const perSecond = (name) => totals[name].calls / totals[name].seconds;
  const cpuPerCall = (name) => Math.round((totals[name].cpuMs * 1000) / totals[name].calls);
  result.max_throughput = {
    direct_per_second: Math.round(perSecond('direct')),
    gateway_per_second: Math.round(perSecond('gateway')),
    ratio: Math.round((perSecond('gateway') / perSecond('direct')) * 100) / 100,
    ...(base
      ? {
          baseline_per_second: Math.round(perSecond('baseline')),
          baseline_ratio: Math.round((perSecond('baseline') / perSecond('direct')) * 100) / 100,
        }
      : {}),
  };
  result.upstream_cpu_us_per_call = cpuPerCall('direct');
  result.gateway_cpu_us_per_call = cpuPerCall('gateway');
  if (base) result.baseline_cpu_us_per_call = cpuPerCall('baseline');
  result.load_after = Math.round(loadavg()[0] * 100) / 100;
  result.target = 'added at 500 calls/s: p50 ≤ 500 µs, p99 ≤ 2,000 µs; throughput ≥ 0.5× direct (DESIGN §7)';
  for (const path of paths) path.client.close();
  for (const process_ of [gw, base, up]) process_?.stop();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const line = (label, value) => console.log(`${label.padEnd(56)}${String(value).padStart(22)}`);
  console.log(
    'MCP gateway benchmark — tools/call through the gateway vs the same upstream directly (Streamable HTTP)',
  );
  console.log(`the gateway's engine: ${store[1]} store`);
  if (base) console.log(`baseline: a second gateway from ${baselineModule}`);
  for (const rate of rates) {
    const figures = result[`at_${rate}_per_second`];
    const name = `${rate}/s`;
    line(`load average (1 min) during ${name}`, figures.load);
    line(`direct p50 / p99 µs at ${name}`, `${figures.direct.p50_us} / ${figures.direct.p99_us}`);
    for (const path of paths.slice(1)) {
      const g = figures[path.name];
      line(`${path.name} p50 / p99 µs at ${name}`, `${g.p50_us} / ${g.p99_us}`);
      line(`added by the ${path.name} p50 / p99 µs at ${name}`, `${g.added.p50_us} / ${g.added.p99_us}`);
    }
    line(
      `achieved rate ${paths.map((path) => path.name).join(' / ')} at ${name}`,
      `${paths.map((path) => figures[path.name].achieved_per_second).join(' / ')}${figures.saturated ? ' (saturated)' : ''}`,
    );
  }
  const throughput = result.max_throughput;
  line(
    'max throughput direct / gateway (calls/s, 16 in flight)',
    `${throughput.direct_per_second} / ${throughput.gateway_per_second}`,
  );
  line('gateway throughput as a ratio of direct', throughput.ratio);
  if (base) {
    line('baseline max throughput (calls/s)', throughput.baseline_per_second);
    line('baseline throughput as a ratio of direct', throughput.baseline_ratio);
  }
  line('upstream CPU per call, direct (µs)', result.upstream_cpu_us_per_call);
  line('gateway CPU per call (µs)', result.gateway_cpu_us_per_call);
  if (base) line('baseline gateway CPU per call (µs)', result.baseline_cpu_us_per_call);
  line('load average (1 min) after', result.load_after);
  console.log(`target: ${result.target}`);
}

if (role === 'upstream') await upstream();
else if (role === 'gateway') await gateway();
else await main();
