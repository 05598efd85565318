// Reading an MCP Streamable HTTP upstream's answers within a size limit: a JSON body, or each
// event of a server-sent event stream, is read no further than the limit, and a longer answer to
// a request stands in as the error answer a stdio upstream's gets (stdio-transport.ts), so the
// call fails at once, recorded as a `tool-error` naming the limit, instead of being read whole.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createParser } from 'eventsource-parser';
import { overLimitMessage } from './line-splitter.js';
import { UPSTREAM_ANSWER_TOO_LARGE } from './stdio-transport.js';

/**
 * An upstream's answer as node:http and undici both give it: the status, the headers (lower-case
 * names) and the body as a stream of Buffers (undici's body ignores `setEncoding`, so the
 * readers here decode it themselves).
 */
export type UpstreamAnswer = Readable & { statusCode?: number; headers: IncomingHttpHeaders };

/** One server-sent event. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Splits a server-sent event stream (WHATWG HTML §9.2) into events with `eventsource-parser`, the
 * parser the MCP SDK's own client transport uses; `retry` updates the delay. An event without a
 * data line is not dispatched (as the standard says); an unfinished event at the end is dropped.
 * More than `maxBytes` bytes read without an event ending destroys the stream and rejects with
 * {@link AnswerOverLimit}.
 */
export function readEvents(
  incoming: UpstreamAnswer,
  onEvent: (event: SseEvent) => void,
  onRetry: (ms: number) => void,
  maxBytes: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    // Bytes read since the last event was dispatched: an event is never held past `maxBytes`.
    let pending = 0;
    const parser = createParser({
      onEvent: (event) => {
        pending = 0;
        onEvent({
          ...(event.id !== undefined ? { id: event.id } : {}),
          event: event.event ?? 'message',
          data: event.data,
        });
      },
      onRetry,
    });
    // A character cut between two chunks is held until its last byte comes.
    const decoder = new StringDecoder('utf8');
    incoming.on('data', (chunk: Buffer) => {
      pending += chunk.length;
      if (pending > maxBytes) {
        // Rejected before the stream is destroyed, which reports itself aborted at once.
        reject(new AnswerOverLimit(maxBytes));
        incoming.destroy();
        return;
      }
      parser.feed(decoder.write(chunk));
    });
    incoming.once('end', () => resolve());
    incoming.once('error', reject);
    incoming.once('aborted', () => reject(new Error('the stream was aborted')));
  });
}

/** An upstream answer (a JSON body, or one event of a stream) longer than the gateway reads. */
export class AnswerOverLimit extends Error {
  constructor(readonly maxBytes: number) {
    super(overLimitMessage('the upstream answer is', maxBytes));
    this.name = 'AnswerOverLimit';
  }
}

/**
 * The body of `incoming` as UTF-8 text, read no further than `maxBytes` bytes: a longer one is
 * dropped (the connection destroyed) and rejects with {@link AnswerOverLimit}.
 */
export function readText(incoming: UpstreamAnswer, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new AnswerOverLimit(maxBytes));
        incoming.destroy();
        return;
      }
      chunks.push(chunk);
    });
    incoming.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    incoming.once('error', reject);
  });
}

/**
 * The error answer that stands for an answer to request `id` over the limit: the one a stdio
 * upstream's gets (`stdio-transport.ts`), so the call fails at once and is recorded as a
 * `tool-error` naming the limit.
 */
export function overLimitAnswer(id: string | number, error: AnswerOverLimit): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: error.message, data: { callgate: UPSTREAM_ANSWER_TOO_LARGE } },
  } as JSONRPCMessage;
}

/** Longest error body of an upstream's HTTP error kept for its message, in bytes. */
export const MAX_ERROR_TEXT_BYTES = 64 * 1024;
