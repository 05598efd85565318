// Test support for the gateway journeys: an engine on a MemoryStore, the gateway in front of
// real upstream MCP servers, served on 127.0.0.1 by @hono/node-server as `callgate serve`
// mounts it (/mcp and /mcp/<profile>), and the SDK's real Client connected to it.
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Engine } from '@callgate/core';
import {
  createGateway,
  type Gateway,
  type GatewayOptions,
  HttpClientTransport,
  type UpstreamConfig,
} from '@callgate/mcp-gateway';
import { TEST_TOOLS, testEngine } from '@callgate/testing';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const ROOT = resolve(import.meta.dirname, '../../..');
export const BIN = resolve(ROOT, 'node_modules/.bin');

/** The filesystem server on `folder`, over stdio. */
export function filesystemUpstream(folder: string, extra: Partial<UpstreamConfig> = {}): UpstreamConfig {
  return {
    name: 'files',
    stdio: { command: resolve(BIN, 'mcp-server-filesystem'), args: [folder] },
    ...extra,
  };
}

/** The MCP "everything" server, over stdio. */
export function everythingUpstream(extra: Partial<UpstreamConfig> = {}): UpstreamConfig {
  return {
    name: 'everything',
    stdio: { command: resolve(BIN, 'mcp-server-everything'), args: ['stdio'] },
    ...extra,
  };
}

/** An engine with `policy` and no tools of its own. */
export async function engineWith(policy: string): Promise<Engine> {
  const { engine } = await testEngine({ policy });
  for (const tool of TEST_TOOLS) engine.registry.remove(tool.name);
  return engine;
}

/** A served gateway: its HTTP base URL and a way to stop everything. */
export interface ServedGateway {
  engine: Engine;
  gateway: Gateway;
  /** `http://127.0.0.1:<port>/mcp` or `.../mcp/<profile>`. */
  url(profile?: string): string;
  close(): Promise<void>;
}

/**
 * Starts the gateway and serves it on 127.0.0.1 (a free port). The principal is the
 * `X-Test-Principal` header (default `alice`); the profile comes from the path, else `full`.
 */
export async function serveGateway(
  options: Omit<GatewayOptions, 'engine'> & { policy: string; engine?: Engine },
): Promise<ServedGateway> {
  const engine = options.engine ?? (await engineWith(options.policy));
  const gateway = createGateway({ ...options, engine });
  await gateway.start();
  const server = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request: Request) => {
      const path = new URL(request.url).pathname;
      const match = /^\/mcp(?:\/([A-Za-z0-9_-]+))?\/?$/.exec(path);
      if (!match) return new Response('not found', { status: 404 });
      const principal = request.headers.get('x-test-principal') ?? 'alice';
      return gateway.handleRequest(request, { principal, profile: match[1] ?? 'full' });
    },
  });
  await new Promise<void>((ready) => server.once('listening', () => ready()));
  const { port } = server.address() as AddressInfo;
  return {
    engine,
    gateway,
    url: (profile) => `http://127.0.0.1:${port}/mcp${profile ? `/${profile}` : ''}`,
    async close() {
      await gateway.close();
      server.closeAllConnections?.();
      await new Promise<void>((done) => server.close(() => done()));
      await engine.close();
    },
  };
}

/**
 * The SDK's Client connected to `url` over Streamable HTTP. The transport is the gateway's own
 * HTTP client transport: the SDK's cannot load under this repository's vitest `source`
 * condition (its dependency eventsource-parser exports TypeScript under that condition). The
 * SDK's transport is exercised against the gateway by the conformance suite, out of vitest.
 */
export async function connectClient(
  url: string,
  options: { capabilities?: ClientCapabilities; headers?: Record<string, string>; name?: string } = {},
): Promise<{ client: Client; transport: HttpClientTransport }> {
  const client = new Client(
    { name: options.name ?? 'vitest-client', version: '1.0.0' },
    { capabilities: options.capabilities ?? {} },
  );
  const transport = new HttpClientTransport(new URL(url), { ...options.headers });
  await client.connect(transport);
  return { client, transport };
}

/**
 * The client end of a stdio MCP connection: reads newline-delimited JSON-RPC from `input` (the
 * server's stdout: a pipe, or a child process's stdout) and writes to `output` (its stdin).
 * Closing ends `output`, which ends the server's session.
 */
export class PipeTransport implements Transport {
  readonly #buffer = new ReadBuffer();
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    readonly input: Readable,
    readonly output: Writable,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (let message = this.#buffer.readMessage(); message; message = this.#buffer.readMessage()) {
        this.onmessage?.(message);
      }
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.output.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.output.end();
    this.onclose?.();
  }
}

/** The error body a refused call carries as its text content. */
export function errorOf(result: { content?: unknown }): {
  kind: string;
  message: string;
  [key: string]: unknown;
} {
  const content = result.content as Array<{ type: string; text?: string }>;
  const text = content.find((item) => item.type === 'text')?.text ?? '{}';
  return (JSON.parse(text) as { error: { kind: string; message: string } }).error;
}

/** Resolves when `check` passes, polling every 20 ms up to `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((wake) => setTimeout(wake, 20));
    }
  }
}
