// The gateway's stdio transports: the client side reads JSON-RPC losslessly (see json-rpc.ts) and
// writes ids and values with the digits they came with (exact-json.ts); the upstream side reads
// answers losslessly too, and turns one that is not valid JSON (a bare NaN, a key given twice)
// into an immediate error for its request. Both read lines within a size limit, never holding
// a longer line whole (line-splitter.ts).
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeJson } from './exact-json.js';
import { invalidJsonAnswer, parseErrorOf, parseUpstreamJson, readClientMessage } from './json-rpc.js';
import { overLimitAnswer, refuseLine } from './jsonrpc-errors.js';
import { idOfCutMessage, type LineRead, LineSplitter, overLimitMessage } from './line-splitter.js';
import { isPlainJsonRpcMessage } from './message-shape.js';

/** Largest message a stdio client may send by default, in bytes: as an HTTP body (http.ts). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Largest answer line read from an upstream's stdio by default, in bytes (the SDK's own buffer
 * had no limit; tools may return files, so this is wider than a client's message).
 */
export const DEFAULT_MAX_UPSTREAM_LINE_BYTES = 16 * 1024 * 1024;

/** The `data.callgate` of the error that stands for an upstream answer over the limit. */
export const UPSTREAM_ANSWER_TOO_LARGE = 'upstream-answer-too-large';

/**
 * MCP stdio server transport (newline-delimited JSON-RPC, as the SDK's `StdioServerTransport`)
 * whose messages are parsed losslessly: an integer beyond ±(2^53−1) reaches the gate with its
 * digits, a duplicate key is answered with a JSON-RPC parse error (-32700) naming it. Messages
 * are written with the digits ids and values came with (an id beyond 2^53 answered as sent). A
 * line over `maxBytes` is answered -32600 naming the limit, never held whole (line-splitter.ts).
 */
export class LosslessStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #lines: LineSplitter;
  #started = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {
    this.#lines = new LineSplitter(maxBytes);
  }

  readonly #onData = (chunk: Buffer | string) => {
    for (const read of this.#lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) {
      if ('overLimit' in read) {
        const { head, tail } = read.overLimit;
        this.onerror?.(new Error(overLimitMessage('a stdio message', this.maxBytes)));
        void this.send(overLimitAnswer(head, tail, this.maxBytes) as unknown as JSONRPCMessage);
        continue;
      }
      const line = read.line;
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = readClientMessage(line, this.maxBytes);
      } catch (error) {
        this.onerror?.(error as Error);
        // The answer the line filter gives such a line (-32700 or -32600 saying what and where).
        const answer = refuseLine(line, this.maxBytes) ?? parseErrorOf(error);
        void this.send(answer as unknown as JSONRPCMessage);
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
 * bare `NaN`, a key given twice) or over `maxBytes` (dropped as it comes, never held whole)
 * becomes a JSON-RPC error answering the request it was for, so the call ends at once as a
 * `tool-error`; a line whose request cannot be read still fails as the SDK's own buffer would.
 */
export class UpstreamReadBuffer {
  readonly #lines: LineSplitter;
  #ready: LineRead[] = [];

  /** @param maxBytes the largest answer line, in bytes. */
  constructor(readonly maxBytes = DEFAULT_MAX_UPSTREAM_LINE_BYTES) {
    this.#lines = new LineSplitter(maxBytes);
  }

  append(chunk: Buffer): void {
    for (const read of this.#lines.push(chunk)) this.#ready.push(read);
  }

  /**
   * The next message, or null when no whole line is waiting.
   * @throws Error for a line that is not JSON-RPC, or over the limit, whose request is unknown.
   */
  readMessage(): JSONRPCMessage | null {
    const read = this.#ready.shift();
    if (read === undefined) return null;
    if ('overLimit' in read) {
      const { head, tail } = read.overLimit;
      // A line whose start names a method may be a request of the upstream: never taken for an answer.
      const id = /"method"\s*:/.test(head) ? undefined : idOfCutMessage(head, tail);
      if (id === undefined) throw new Error(overLimitMessage('an upstream message', this.maxBytes));
      const reason = overLimitMessage('the upstream answer is', this.maxBytes);
      return {
        jsonrpc: '2.0',
        id,
        error: { code: -32603, message: reason, data: { callgate: UPSTREAM_ANSWER_TOO_LARGE } },
      };
    }
    const line = read.line;
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
    this.#ready = [];
  }
}
