// The gateway's stdio transports: the client side reads JSON-RPC losslessly (see json-rpc.ts) and
// writes ids and values with the digits they came with (exact-json.ts); the upstream side reads
// answers losslessly too, and turns one that is not valid JSON (a bare NaN, a key given twice)
// into an immediate error for its request.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeJson } from './exact-json.js';
import { invalidJsonAnswer, parseErrorOf, parseUpstreamJson, readClientMessage } from './json-rpc.js';
import { isPlainJsonRpcMessage } from './message-shape.js';

/** Largest line a stdio peer may send, in bytes (the SDK's own default). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Splits a byte stream into lines (without `\n` / `\r\n`). */
class Lines {
  #buffer: Buffer | undefined;

  append(chunk: Buffer): void {
    this.#buffer = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
    if (this.#buffer.length > MAX_LINE_BYTES && this.#buffer.indexOf('\n') < 0) {
      this.#buffer = undefined;
      throw new Error(`a stdio message is over ${MAX_LINE_BYTES} bytes`);
    }
  }

  next(): string | undefined {
    const buffer = this.#buffer;
    if (!buffer) return undefined;
    const index = buffer.indexOf('\n');
    if (index < 0) return undefined;
    this.#buffer = buffer.subarray(index + 1);
    return buffer.toString('utf8', 0, index).replace(/\r$/, '');
  }

  clear(): void {
    this.#buffer = undefined;
  }
}

/**
 * MCP stdio server transport (newline-delimited JSON-RPC, as the SDK's `StdioServerTransport`)
 * whose messages are parsed losslessly: an integer beyond ±(2^53−1) reaches the gate with its
 * digits, a duplicate key is answered with a JSON-RPC parse error (-32700) naming it. Messages
 * are written with the digits ids and values came with (an id beyond 2^53 answered as sent).
 */
export class LosslessStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #lines = new Lines();
  #started = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
  ) {}

  readonly #onData = (chunk: Buffer) => {
    try {
      this.#lines.append(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    for (let line = this.#lines.next(); line !== undefined; line = this.#lines.next()) {
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = readClientMessage(line, MAX_LINE_BYTES);
      } catch (error) {
        this.onerror?.(error as Error);
        void this.send(parseErrorOf(error) as unknown as JSONRPCMessage);
        continue;
      }
      this.onmessage?.(message);
    }
  };

  readonly #onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    if (this.#started) throw new Error('the stdio transport is already started');
    this.#started = true;
    this.stdin.on('data', this.#onData);
    this.stdin.on('error', this.#onError);
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.#onData);
    this.stdin.off('error', this.#onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.#lines.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${writeJson(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }
}

/**
 * A read buffer for the SDK's `StdioClientTransport` (set as its `_readBuffer`): lines are read
 * losslessly (`parseUpstreamJson`: numbers keep their digits); a line that is not valid JSON (a
 * bare `NaN`, a key given twice) becomes a JSON-RPC error answering the request it was for, so
 * the call ends at once as a `tool-error`; a line whose request cannot be read still fails as the
 * SDK's own buffer would.
 */
export class UpstreamReadBuffer {
  readonly #lines = new Lines();

  append(chunk: Buffer): void {
    this.#lines.append(chunk);
  }

  readMessage(): JSONRPCMessage | null {
    const line = this.#lines.next();
    if (line === undefined) return null;
    let value: unknown;
    try {
      value = parseUpstreamJson(line);
    } catch (error) {
      const answer = invalidJsonAnswer(line, error instanceof Error ? error.message : String(error));
      if (answer) return answer;
      throw error;
    }
    return isPlainJsonRpcMessage(value) ? (value as JSONRPCMessage) : JSONRPCMessageSchema.parse(value);
  }

  clear(): void {
    this.#lines.clear();
  }
}
