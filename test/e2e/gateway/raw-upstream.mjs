// A test upstream MCP server over stdio that writes its answers as raw JSON text, for what the
// SDK's server cannot send: a JSON-RPC error with a code of the server range (-32000) and data
// holding digits a double cannot hold, and numbers spelled as the test wants them. Tools:
// - `fail`: answers `{"code":-32000,"message":"boom","data":{"big":12345678901234567890}}`;
// - `numbers`: returns `structuredContent` `{"f":1.10,"g":1E2,"h":-0}` as written here.
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin });
const send = (text) => process.stdout.write(`${text}\n`);
const schema = { type: 'object' };

lines.on('line', (line) => {
  if (line.trim() === '') return;
  const message = JSON.parse(line);
  if (message.id === undefined || message.method === undefined) return; // notifications, answers
  const id = JSON.stringify(message.id);
  const result = (text) => send(`{"jsonrpc":"2.0","id":${id},"result":${text}}`);
  switch (message.method) {
    case 'initialize':
      return result(
        JSON.stringify({
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'raw-upstream', version: '1.0.0' },
        }),
      );
    case 'tools/list':
      return result(
        JSON.stringify({
          tools: [
            { name: 'fail', description: 'Answers with a JSON-RPC error', inputSchema: schema },
            { name: 'numbers', description: 'Returns numbers as spelled', inputSchema: schema },
          ],
        }),
      );
    case 'tools/call':
      if (message.params.name === 'fail')
        return send(
          `{"jsonrpc":"2.0","id":${id},"error":{"code":-32000,"message":"boom","data":{"big":12345678901234567890}}}`,
        );
      return result(
        '{"content":[{"type":"text","text":"numbers"}],"structuredContent":{"f":1.10,"g":1E2,"h":-0}}',
      );
    default:
      return result('{}');
  }
});
