// What the fixed fidelity scenarios (fidelity-scenarios.json) are played against, as a user
// runs callgate: a real `callgate serve` process (HTTP API and the MCP gateway, whose upstream is
// test/e2e/gateway/fidelity-upstream.mjs, built with the SDK's McpServer, over stdio) and real
// `callgate mcp --stdio` processes, all of the build CALLGATE_CLI_SCRIPT names (default: this
// checkout's). Requests go as raw text, so digits and escapes travel exactly as the table has
// them; answers come back as raw text too.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, cliNode, runCallgate, type ServerProcess, startCallgate } from '../e2e/server/harness.js';

/** The upstream MCP server of the table (this checkout's, whichever build is played). */
const UPSTREAM = join(import.meta.dirname, '../e2e/gateway/fidelity-upstream.mjs');

/** How long a process may take to start and answer `initialize` on a loaded machine (ms). */
const STARTUP_MS = 30_000;

/** How long the gateway waits for the upstream before it gives up on a call (ms). */
const UPSTREAM_TIMEOUT_MS = 20_000;

const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 10s }
profiles:
  narrow: [echo]
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
  - id: upstream-tools
    match: { tools: [echo, nan, surrogate, big, dupkey] }
    effect: allow
  - id: bumps-need-a-person
    match: { tools: [bump] }
    effect: ask
    reason: bumps need a person
`;

const CONFIG = `
tools:
  - name: read_file
    inputSchema: { type: object, properties: { path: { type: string } }, required: [path], additionalProperties: false }
    annotations: { readOnlyHint: true }
  - name: send_invoice
    inputSchema:
      type: object
      properties: { to: { type: string }, amount: { type: number } }
      required: [to, amount]
      additionalProperties: false
upstreams:
  - name: fid
    stdio: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(UPSTREAM)}] }
    timeout: ${UPSTREAM_TIMEOUT_MS}ms
`;

/** An answer as received: status (HTTP; 0 for a stdio line), raw text, parsed JSON if any. */
export interface Answer {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as the table says
  json: any;
  /** The whole HTTP body (every message of an event stream or a batch answer); unset over stdio. */
  body?: string;
}

/** A request the gateway sends the client, and the raw result text to answer it with. */
export interface RequestAnswer {
  method: string;
  answer: string;
}

/** A JSON-RPC request the gateway sent the client. */
export interface SeenRequest {
  method: string;
  params?: { message?: string };
}

const parse = (text: string) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The JSON-RPC answer in an HTTP body: JSON, or the last `data:` message of an SSE stream. */
function jsonRpcAnswer(text: string): string {
  if (!text.startsWith('event:') && !text.startsWith('data:') && !text.startsWith('id:')) return text;
  const messages = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim());
  return messages.reverse().find((message) => /"(result|error)"/.test(message)) ?? '';
}

export class FidelityWorld {
  server!: ServerProcess;
  readonly #folders: string[] = [];

  async start(): Promise<void> {
    this.server = await startCallgate({
      keys: { agent: 'agent', root: 'admin' },
      policy: POLICY,
      config: CONFIG,
    });
  }

  async close(): Promise<void> {
    await this.server?.stop();
    for (const folder of this.#folders) await rm(folder, { recursive: true, force: true });
  }

  /** One HTTP API request: `METHOD /path` with the raw body, as the key named `as`. */
  async api(send: string, as: string, body?: string): Promise<Answer> {
    const [method, path] = send.split(' ') as [string, string];
    const response = await fetch(`${this.server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.server.keys[as]}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return { status: response.status, text, json: parse(text) };
  }

  /** The exported bundle of `runId` (through the server), parsed. */
  async bundle(runId: string): Promise<{ text: string; records: Array<Record<string, unknown>> }> {
    const answer = await this.api(`GET /v1/runs/${runId}/bundle`, 'root');
    if (answer.status !== 200)
      throw new Error(`export of ${runId} answered ${answer.status}: ${answer.text}`);
    return { text: answer.text, records: answer.json.records };
  }

  /** The verdict of the build's verifier with `strict` on a bundle's text, pinned to `publicKey`. */
  async verify(text: string, publicKey: string): Promise<{ ok: boolean; checks: string[] }> {
    const query = `strict=true&public_key=${encodeURIComponent(publicKey)}`;
    const answer = await this.api(`POST /v1/verify?${query}`, 'root', text);
    if (answer.status !== 200) throw new Error(`verify answered ${answer.status}: ${answer.text}`);
    return {
      ok: answer.json.ok,
      checks: answer.json.failures.map((failure: { check: string }) => failure.check),
    };
  }

  /** `callgate verify FILE --strict --json`, pinned to the key in `keyFile`. */
  async verifyFile(
    file: string,
    keyFile: string,
  ): Promise<{ ok: boolean; checks: string[]; code: number | null }> {
    const key = (await readFile(keyFile, 'utf8')).trim();
    const result = await runCallgate(['verify', file, '--public-key', key, '--strict', '--json']);
    const report = parse(result.stdout);
    if (!report)
      throw new Error(`callgate verify printed no report (${result.code}): ${result.stdout}${result.stderr}`);
    return {
      ok: report.ok,
      checks: report.failures.map((failure: { check: string }) => failure.check),
      code: result.code,
    };
  }

  /** The id of the run whose client was `client` (its clientInfo name), once it has ended. */
  async endedRunOf(client: string): Promise<string> {
    for (let waited = 0; waited < 10_000; waited += 50) {
      const runs = (await this.api('GET /v1/runs?limit=100', 'root')).json.runs as Array<{
        run_id: string;
        status: string;
        labels: Record<string, string>;
      }>;
      const run = runs.find((item) => item.labels.client === client);
      if (run && run.status !== 'running') return run.run_id;
      await new Promise((wake) => setTimeout(wake, 50));
    }
    throw new Error(`no ended run for MCP client ${client}`);
  }

  /**
   * An MCP session over Streamable HTTP at /mcp[/profile] with the agent key, initialised as
   * `client`: `send` posts raw JSON-RPC text and returns the answer's raw text, aborting after
   * `withinMs`; `close` ends the session (DELETE), which ends its run.
   */
  async mcpHttp(client: string, profile: string | undefined, capabilities: object) {
    const url = `${this.server.url}/mcp${profile ? `/${profile}` : ''}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.server.keys.agent}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const post = async (text: string, withinMs = 10_000): Promise<Answer> => {
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body: text,
        signal: AbortSignal.timeout(withinMs),
      });
      const session = response.headers.get('mcp-session-id');
      if (session) headers['mcp-session-id'] = session;
      const body = await response.text();
      const answer = jsonRpcAnswer(body);
      return { status: response.status, text: answer, json: parse(answer), body };
    };
    const initialized = await post(initializeText(client, capabilities));
    if (!initialized.json?.result)
      throw new Error(`initialize answered ${initialized.status}: ${initialized.text}`);
    headers['mcp-protocol-version'] = initialized.json.result.protocolVersion;
    await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    return {
      send: post,
      close: async () => {
        await (await fetch(url, { method: 'DELETE', headers })).text();
      },
    };
  }

  /**
   * `callgate mcp --stdio` on a data folder of its own, initialised as `client`: `send` writes a
   * raw line and waits up to `withinMs` for the line answering it, answering the gateway's
   * requests meanwhile as `answers` say (and returning them); `close` ends stdin, waits for the
   * process to exit and returns the run's exported bundle text (`callgate export`).
   */
  async mcpStdio(client: string, capabilities: object) {
    const data = await mkdtemp(join(tmpdir(), 'callgate-fidelity-stdio-'));
    this.#folders.push(data);
    const config = join(this.server.dir, 'callgate.yaml');
    const child = spawn(cliNode(), [BIN, 'mcp', '--stdio', '--config', config, '--data', data], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const lines: string[] = [];
    const waiters = new Set<() => void>();
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        lines.push(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
      }
      for (const wake of waiters) wake();
    });
    const write = (text: string) => child.stdin.write(`${text}\n`);
    let read = 0;
    const send = async (
      text: string,
      answers: RequestAnswer[] = [],
      withinMs = 10_000,
    ): Promise<{ answer: Answer; requests: SeenRequest[] }> => {
      const id = parse(text)?.id;
      const requests: SeenRequest[] = [];
      write(text);
      const deadline = Date.now() + withinMs;
      for (;;) {
        while (read < lines.length) {
          const line = lines[read++] as string;
          const message = parse(line);
          const handler = answers.find((item) => message?.method === item.method && message.id !== undefined);
          if (handler) {
            requests.push(message);
            write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${handler.answer}}`);
          } else if (message && message.id === id && ('result' in message || 'error' in message)) {
            return { answer: { status: 0, text: line, json: message }, requests };
          }
        }
        const left = deadline - Date.now();
        if (left <= 0 || child.exitCode !== null)
          throw new Error(`no answer to ${id} within ${withinMs} ms from callgate mcp --stdio\n${stderr}`);
        await new Promise<void>((wake) => {
          const timer = setTimeout(wake, left);
          waiters.add(() => {
            clearTimeout(timer);
            wake();
          });
        });
        waiters.clear();
      }
    };
    await send(initializeText(client, capabilities), [], STARTUP_MS);
    write('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    return {
      send,
      close: async (): Promise<string> => {
        child.stdin.end();
        const code = await exited;
        if (code !== 0) throw new Error(`callgate mcp --stdio exited ${code}:\n${stderr}`);
        const listed = await runCallgate(['runs', 'list', '--data', data, '--limit', '1']);
        const runId = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(listed.stdout)?.[0];
        if (!runId) throw new Error(`no run in ${data}: ${listed.stdout}${listed.stderr}`);
        const out = join(data, 'bundle.json');
        const exported = await runCallgate(['export', '--run', runId, '--data', data, '--out', out]);
        if (exported.code !== 0) throw new Error(`export failed: ${exported.stdout}${exported.stderr}`);
        return readFile(out, 'utf8');
      },
    };
  }
}

function initializeText(client: string, capabilities: object): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: client, version: '1.0.0' } },
  });
}
