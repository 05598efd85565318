// What reading one JSON-RPC message costs the gateway, before and after its fast paths, measured
// side by side in one process (alternating rounds; the median of each): a `tools/call` request
// as the client sends it (parse, the -32600 and -32602 checks, request detection) and an
// upstream's result (the JSON-RPC check), small and with a 4 KB payload.
// Run after `npm run build`: `node bench/gateway-parse.mjs [--rounds 15]`
import { loadavg } from 'node:os';
import { parseJsonLossless } from '@callgate/core';
import {
  CallToolRequestSchema,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { parseClientJson } from '../packages/mcp-gateway/dist/json-rpc.js';
import { isPlainJsonRpcMessage, isPlainToolCall } from '../packages/mcp-gateway/dist/message-shape.js';

const roundsIndex = process.argv.indexOf('--rounds');
const rounds = roundsIndex > 0 ? Number(process.argv[roundsIndex + 1]) : 15;
const limits = { maxBytes: 4 * 1024 * 1024, maxDepth: 80 };

const request = (payload) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: { name: 'read_file', arguments: { path: '/data/notes.txt', tail: 20, payload } },
  });
const result = (payload) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 42,
    result: { content: [{ type: 'text', text: `line 1\nline 2\n${payload}` }], isError: false },
  });
const payloads = { small: '', '4 KB': 'x'.repeat(4096) };

const before = {
  request: (text) => {
    const value = parseJsonLossless(text, 'message', limits);
    JSONRPCMessageSchema.safeParse(value); // the -32600 check
    JSONRPCMessageSchema.parse(value); // the SDK transport's own parse
    isJSONRPCRequest(value); // which messages are tool calls
    CallToolRequestSchema.safeParse(value); // the -32602 check
  },
  result: (text) => JSONRPCMessageSchema.safeParse(JSON.parse(text)),
};
const after = {
  request: (text) => {
    const value = parseClientJson(text, limits.maxBytes);
    if (!isPlainJsonRpcMessage(value)) JSONRPCMessageSchema.safeParse(value);
    JSONRPCMessageSchema.parse(value); // the SDK transport's own parse (unchanged)
    if (!isPlainToolCall(value)) CallToolRequestSchema.safeParse(value);
  },
  result: (text) => {
    const value = JSON.parse(text);
    if (!isPlainJsonRpcMessage(value)) JSONRPCMessageSchema.safeParse(value);
  },
};

/** µs per call of `work(text)`, over enough iterations to take about 100 ms. */
function time(work, text) {
  let iterations = 200;
  for (;;) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < iterations; index++) work(text);
    const elapsed = Number(process.hrtime.bigint() - started) / 1e3;
    if (elapsed > 100_000) return elapsed / iterations;
    iterations *= 2;
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`reading one JSON-RPC message in the gateway, µs (median of ${rounds} alternating rounds)`);
console.log(`load average (1 min) before: ${loadavg()[0].toFixed(2)}`);
for (const [label, payload] of Object.entries(payloads)) {
  for (const [kind, make] of [
    ['tools/call request', request],
    ['upstream result', result],
  ]) {
    const text = make(payload);
    const key = kind === 'tools/call request' ? 'request' : 'result';
    const samples = { before: [], after: [] };
    for (let round = 0; round < rounds; round++) {
      samples.before.push(time(before[key], text));
      samples.after.push(time(after[key], text));
    }
    const b = median(samples.before);
    const a = median(samples.after);
    console.log(
      `${`${kind}, ${label} (${text.length} B)`.padEnd(40)} before ${b.toFixed(1).padStart(7)}   after ${a.toFixed(1).padStart(7)}   ${(b / a).toFixed(1)}×`,
    );
  }
}
console.log(`load average (1 min) after: ${loadavg()[0].toFixed(2)}`);
