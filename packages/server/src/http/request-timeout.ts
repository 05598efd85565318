// Time limits on receiving a request: its head (request line and headers) and its whole body. A
// client that declares `Content-Length: 1000` and sends 10 bytes, or sends half a header and
// stops, would otherwise hold a connection, a socket and a parser's memory for as long as it likes.
//
// Node's HTTP server keeps the clocks (`headersTimeout`, `requestTimeout`, looked at every
// `connectionsCheckingInterval`); this file picks the values and writes the answer, so a request
// that runs out of time gets the API's error JSON with status 408 (RFC 9110 §15.5.9) and its
// connection closed, instead of Node's bare status line.
import type { Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import { CallgateError } from '@callgate/protocol';

import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '../defaults.js';

export { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS };

/** The time limits on receiving one request, ms (see the file header). */
export interface RequestTimeouts {
  /** Longest time from a request's first byte to the end of its headers. */
  headersTimeoutMs: number;
  /** Longest time from a request's first byte to the end of its body. */
  requestTimeoutMs: number;
}

/**
 * The `node:http` server options that enforce `timeouts`.
 *
 * The head's limit is held to the whole request's (Node refuses a longer one); the clocks are
 * looked at a quarter of the shorter limit apart (at most every second, at least every 10 ms),
 * so a request is cut within about 1.25 times its limit.
 *
 * @throws CallgateError `request-invalid` when a limit is not a positive whole number of ms.
 */
export function requestTimeoutOptions(timeouts: RequestTimeouts): ServerOptions {
  for (const [name, value] of Object.entries(timeouts))
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new CallgateError(
        'request-invalid',
        `${name}: must be a positive whole number of ms (got ${value})`,
      );
  const headersTimeout = Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs);
  return {
    headersTimeout,
    requestTimeout: timeouts.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
  };
}

/** One raw HTTP/1.1 answer with the API's error JSON, closing the connection. */
function rawErrorAnswer(status: number, reason: string, error: CallgateError): string {
  const body = JSON.stringify(error.toBody());
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Answers the connection errors Node's HTTP parser reports (`clientError`): a request that ran
 * out of time gets 408, a head too large 431, anything else unparsable 400, each with the API's
 * error JSON (`request-invalid`), written only when the socket is still writable and no answer
 * has started on it; the socket is then destroyed. This replaces Node's own bare answers.
 *
 * @param server a server made with {@link requestTimeoutOptions}.
 * @param timeouts the limits it holds, for the 408's message.
 */
export function answerClientErrors(server: Server, timeouts: RequestTimeouts): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !answering?.headersSent) {
      const answer =
        error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? rawErrorAnswer(
              408,
              'Request Timeout',
              new CallgateError(
                'request-invalid',
                `the request was not received in time (headers within ${timeouts.headersTimeoutMs} ms, the whole request within ${timeouts.requestTimeoutMs} ms)`,
              ),
            )
          : error.code === 'HPE_HEADER_OVERFLOW'
            ? rawErrorAnswer(
                431,
                'Request Header Fields Too Large',
                new CallgateError('request-invalid', 'the request headers are too large'),
              )
            : rawErrorAnswer(
                400,
                'Bad Request',
                new CallgateError('request-invalid', 'the request is not valid HTTP/1.1'),
              );
      // As Node does for its own answers: the few bytes go to the kernel at once, then the socket
      // closes (its reader may be a client that never reads).
      socket.write(answer);
    }
    socket.destroy();
  });
}
