// A test upstream MCP server built with the SDK's McpServer, served over stdio (or, with
// CALLGATE_TEST_HTTP=1, over Streamable HTTP on 127.0.0.1, its port printed as `PORT <n>`, until
// stdin ends), for the gateway's record-fidelity tests and the generated harness. Tools:
// - `bump`: appends its arguments to the counter file named by CALLGATE_TEST_COUNTER (a side
//   effect to count), then acts as its `act` argument says: `ok` returns the arguments, `throw`
//   throws, `nan` answers with a bare NaN, `dupkey` answers with a key given twice, `surrogate`
//   returns a lone surrogate; a `big` argument (digits, as a string) is returned as a bare number
//   in `structuredContent.big`;
// - `echo`: returns its arguments as text (the digits it received);
// - `nan`: answers with a bare NaN token (not valid JSON) on the wire;
// - `big`: returns its `digits` argument (default 12345678901234567890123) as bare numbers in
//   `structuredContent` and in its content's `_meta`;
// - `dupkey`: answers `"structuredContent":{"score":1,"score":2}` (a key given twice) on the wire;
// - `surrogate`: returns text holding a lone surrogate;
// - `boom`: throws;
// - `hang`: never answers;
// - `huge`: returns a text of `bytes` bytes (default 16 MiB and 1 KiB: over the gateway's limit
//   on an upstream's answer, stdio or HTTP).
import { appendFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const counter = process.env.CALLGATE_TEST_COUNTER;
const server = new McpServer({ name: 'fidelity-upstream', version: '1.0.0' });
const text = (value) => ({ content: [{ type: 'text', text: value }] });
const loose = z.object({}).passthrough();

server.registerTool('bump', { description: 'Counts one side effect', inputSchema: loose }, (args) => {
  if (counter) appendFileSync(counter, `${JSON.stringify(args)}\n`);
  if (args.act === 'throw') throw new Error('the tool failed');
  if (args.act === 'nan')
    return { content: [{ type: 'text', text: 'score' }], structuredContent: { score: '__BARE_NAN__' } };
  if (args.act === 'dupkey') return duplicateKey();
  if (args.act === 'surrogate') return text(`broken \uD800 ${args.tag}`);
  if (typeof args.big === 'string')
    return { ...text(JSON.stringify(args)), structuredContent: { big: `__RAW__${args.big}` } };
  return text(JSON.stringify(args));
});
server.registerTool('echo', { description: 'Echoes its arguments', inputSchema: loose }, (args) =>
  text(JSON.stringify(args)),
);
server.registerTool('nan', { description: 'Answers with a bare NaN', inputSchema: loose }, () => ({
  content: [{ type: 'text', text: 'score' }],
  structuredContent: { score: '__BARE_NAN__' },
}));
const duplicateKey = () => ({
  content: [{ type: 'text', text: 'score' }],
  structuredContent: { score: 1, __DUP_score__: 2 },
});
server.registerTool('dupkey', { description: 'Answers with a key given twice', inputSchema: loose }, () =>
  duplicateKey(),
);
server.registerTool('big', { description: 'Returns big integers', inputSchema: loose }, (args) => {
  const digits = typeof args.digits === 'string' ? args.digits : '12345678901234567890123';
  return {
    content: [{ type: 'text', text: `big ${digits}`, _meta: { n: `__RAW__${digits}` } }],
    structuredContent: { n: `__RAW__${digits}`, list: [`__RAW__-${digits}`, 1] },
  };
});
server.registerTool('surrogate', { description: 'Returns a lone surrogate', inputSchema: loose }, () =>
  text('broken \uD800 text'),
);
server.registerTool('huge', { description: 'Returns a text of `bytes` bytes', inputSchema: loose }, (args) =>
  text('h'.repeat(typeof args.bytes === 'number' ? args.bytes : 16 * 1024 * 1024 + 1024)),
);
server.registerTool('boom', { description: 'Throws', inputSchema: loose }, () => {
  throw new Error('boom');
});
server.registerTool(
  'hang',
  { description: 'Never answers', inputSchema: loose },
  () => new Promise(() => {}),
);

// The wire as sent: the marker string becomes a bare NaN token, which is not JSON; `"__RAW__<n>"`
// becomes the bare number n (digits JSON.stringify cannot write); `"__DUP_<key>__"` becomes
// `"<key>"` (a key given twice).
const bareNan = (text) =>
  text
    .replaceAll('"__BARE_NAN__"', 'NaN')
    .replace(/"__RAW__(-?[0-9][0-9.eE+-]*)"/g, '$1')
    .replace(/"__DUP_(\w+)__"/g, '"$1"');

if (process.env.CALLGATE_TEST_HTTP === '1') {
  const { randomUUID } = await import('node:crypto');
  const { serve } = await import('@hono/node-server');
  const { WebStandardStreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
  );
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await server.connect(transport);
  const http = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const response = await transport.handleRequest(request);
      if (!response.body) return response;
      const decoder = new TextDecoder();
      const encoder = new TextEncoder();
      const body = response.body.pipeThrough(
        new TransformStream({
          transform(chunk, controller) {
            controller.enqueue(encoder.encode(bareNan(decoder.decode(chunk, { stream: true }))));
          },
        }),
      );
      return new Response(body, { status: response.status, headers: response.headers });
    },
  });
  http.once('listening', () => process.stdout.write(`PORT ${http.address().port}\n`));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else {
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      process.stdout.write(bareNan(chunk.toString('utf8')), done);
    },
  });
  await server.connect(new StdioServerTransport(process.stdin, stdout));
}
