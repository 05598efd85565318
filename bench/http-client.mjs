// What one upstream exchange of the gateway's tools/call lane costs its HTTP client, node:http
// (as packages/mcp-gateway/src/http-client.ts sends: a kept-alive Agent, the URL's request options
// worked out once, the headers spread per request, the answer read to a string) against undici's
// `Pool.request()` (the same request, the answer read with `body.text()`), side by side in one
// process. The upstream is a plain node:http server in a child process (its CPU is not counted)
// that answers every POST as the MCP SDK's Streamable HTTP server does by default: 200,
// text/event-stream, one `message` event with the tools/call result. Each round sends `--calls`
// tools/call bodies per client, `--in-flight` at a time, over keep-alive connections; the clients
// alternate, the order reversed every other round. Printed: CPU µs per call of this process
// (user + system, process.cpuUsage) per client, the median over the rounds, their ratio, and the
// load average (1 min) before and after.
// Run: `node bench/http-client.mjs [--rounds 8] [--calls 4000] [--in-flight 16] [--json-answer]`
// (`--json-answer`: the upstream answers application/json instead of an event stream).
import { spawn } from 'node:child_process';
import { createServer, Agent as HttpAgent, request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath, urlToHttpOptions } from 'node:url';
import { Pool } from 'undici';

const argument = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : fallback;
};
const jsonAnswer = process.argv.includes('--json-answer');

function serveUpstream() {
  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const answer = JSON.stringify({
        jsonrpc: '2.0',
        id: call.id,
        result: { content: [{ type: 'text', text: String(call.params?.arguments?.text ?? '') }] },
      });
      const headers = { 'mcp-session-id': request.headers['mcp-session-id'] ?? 'none' };
      if (jsonAnswer) {
        response.writeHead(200, { ...headers, 'content-type': 'application/json' });
        response.end(answer);
      } else {
        response.writeHead(200, {
          ...headers,
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
        });
        response.end(`event: message\ndata: ${answer}\n\n`);
      }
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`));
  process.stdin.on('end', () => server.close(() => process.exit(0)));
  process.stdin.resume();
}

/** The upstream in a child process; stops when this process ends (its stdin closes). */
async function startUpstream() {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), '--role', 'upstream', ...(jsonAnswer ? ['--json-answer'] : [])],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      const match = /PORT (\d+)/.exec(String(chunk));
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the upstream exited (${code})`)));
  });
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), stop: () => child.stdin.end() };
}

const fixedHeaders = {
  'mcp-session-id': '3f1c2a9e-5d7b-4c1e-9a2f-8b6d0e4c7a15',
  'mcp-protocol-version': '2025-11-25',
};

function body(id) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: `hello ${id}` } },
  });
}

/** node:http as http-client.ts sends a request and reads its answer. */
function nodeHttpClient(url) {
  const { protocol, hostname, port, path } = urlToHttpOptions(url);
  const target = { protocol, hostname, port, path };
  const agent = new HttpAgent({ keepAlive: true });
  return {
    send: (text) =>
      new Promise((resolve, reject) => {
        const request = httpRequest({
          ...target,
          method: 'POST',
          agent,
          headers: {
            ...fixedHeaders,
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(text)),
          },
        });
        request.once('response', (incoming) => {
          const chunks = [];
          incoming.on('data', (chunk) => chunks.push(chunk));
          incoming.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          incoming.once('error', reject);
        });
        request.once('error', reject);
        request.end(text);
      }),
    close: async () => agent.destroy(),
  };
}

/** undici's Pool, one per origin, as the lane would hold it. */
function undiciClient(url) {
  const pool = new Pool(url.origin, { keepAliveTimeout: 60_000 });
  const path = url.pathname + url.search;
  return {
    send: async (text) => {
      const { statusCode, body: answer } = await pool.request({
        path,
        method: 'POST',
        headers: {
          ...fixedHeaders,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: text,
      });
      if (statusCode !== 200) throw new Error(`HTTP ${statusCode}`);
      return answer.text();
    },
    close: () => pool.close(),
  };
}

/** `calls` exchanges, `inFlight` at a time; checks every answer carries its request's id. */
async function drive(client, calls, inFlight) {
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      const id = next++;
      const answer = await client.send(body(id));
      if (!answer.includes(`"id":${id},`)) throw new Error(`answer ${id} is not its call's: ${answer}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

function cpuMicros() {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main() {
  const rounds = Number(argument('--rounds', '8'));
  const calls = Number(argument('--calls', '4000'));
  const inFlight = Number(argument('--in-flight', '16'));
  const upstream = await startUpstream();
  const clients = [
    { name: 'node:http', client: nodeHttpClient(upstream.url), cpu: [], wall: [] },
    { name: 'undici Pool.request', client: undiciClient(upstream.url), cpu: [], wall: [] },
  ];
  const loadBefore = loadavg()[0];
  // Warm-up: connections open, code optimised.
  for (const entry of clients) await drive(entry.client, 2_000, inFlight);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? clients : [...clients].reverse();
    for (const entry of order) {
      const cpu = cpuMicros();
      const started = performance.now();
      await drive(entry.client, calls, inFlight);
      entry.wall.push(((performance.now() - started) * 1000) / calls);
      entry.cpu.push((cpuMicros() - cpu) / calls);
    }
  }
  const loadAfter = loadavg()[0];
  for (const entry of clients) await entry.client.close();
  upstream.stop();
  const [node, undici] = clients;
  const fixed = (value) => value.toFixed(1);
  console.log(
    `HTTP client of the tools/call lane: ${calls} calls × ${rounds} rounds per client, ${inFlight} in flight, ` +
      `answers as ${jsonAnswer ? 'application/json' : 'text/event-stream'}, node ${process.version}`,
  );
  console.log(`load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${loadAfter.toFixed(2)}`);
  for (const entry of clients) {
    console.log(
      `${entry.name.padEnd(22)} CPU µs per call, median ${fixed(median(entry.cpu)).padStart(6)} ` +
        `(rounds: ${entry.cpu.map(fixed).join(' ')}); wall µs per call ${fixed(median(entry.wall))}`,
    );
  }
  console.log(`undici / node:http CPU per call: ${(median(undici.cpu) / median(node.cpu)).toFixed(2)}`);
}

if (argument('--role') === 'upstream') serveUpstream();
else await main();
