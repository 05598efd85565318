// A request answered before its body was read (a body over its limit answered 413, a missing key
// 401, an unknown path 404) still has its body on the way. Node closes a connection the client
// asked to close (`Connection: close`, as Python's urllib sends) right after the answer; closing a
// socket whose unread bytes are still arriving resets it (TCP RST), so a client that writes its
// whole body before it reads sees a broken pipe instead of the answer. So such a connection is
// half-closed after the answer and the rest of the body read and discarded, up to a bound (a body
// longer than that is cut, as before), before the socket is destroyed.
//
// A connection kept alive needs the same: Node discards an unread body after the answer only when
// nothing has started reading it, but a body of unknown length (chunked) is counted as it arrives
// (Hono's `bodyLimit`, the MCP gateway's reader), so the reader that stopped at the limit holds it
// paused. Nothing then read the rest, the client's writes stalled, and the connection was cut at
// the request timeout: a broken pipe instead of the 413. So every answer that finishes before its
// request's body ends discards the rest of that body, whoever had begun to read it.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Most bytes of an unread body read and discarded before answering (64 MiB). */
export const UNREAD_BODY_DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * Reads and discards what is left of `incoming`'s body, until it ends, fails, closes, more than
 * `limit` bytes have passed or `timeoutMs` ms have; resolves then (never rejects).
 *
 * @param limit bytes, at most.
 * @param timeoutMs ms, at most; default no limit of its own.
 * @returns whether the body was read to its end.
 */
export function discardBody(incoming: IncomingMessage, limit: number, timeoutMs?: number): Promise<boolean> {
  if (incoming.complete || incoming.readableEnded) return Promise.resolve(true);
  if (incoming.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            incoming.pause();
            done(false);
          }, timeoutMs);
    const done = (ended: boolean) => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onFailed);
      incoming.off('close', onFailed);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) {
        incoming.pause();
        done(false);
      }
    };
    const onEnd = () => done(true);
    const onFailed = () => done(incoming.complete);
    // The request is answered: whoever read the body before (a web stream that stopped at a
    // limit, and pauses the body when its queue is full) gives it up, as Node's own discard does.
    incoming.removeAllListeners('data');
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('error', onFailed);
    incoming.once('close', onFailed);
    incoming.resume();
  });
}

/**
 * Makes `server` answer first, then drain, then close or go on: when an answer finishes while its
 * request's body is still arriving (a 413 sent before the body was read, or after a reader of a
 * chunked body stopped at the limit; a 401; a 404), the rest of the body is read and discarded (at
 * most `limit` bytes, for at most `timeoutMs`), whether the body has a Content-Length or is
 * chunked. A connection kept alive then serves its next request; one cut short (over `limit`, out
 * of time) is destroyed. When Node closes a connection after an answer (the client sent
 * `Connection: close`, or `@hono/node-server` gives up on a keep-alive body), the connection is
 * half-closed instead (the answer and a FIN go out), the body drained the same way, and only then
 * is the socket destroyed. A client that writes its whole body before reading so gets the answer,
 * and a client that waits for the answer before sending gets it at once.
 *
 * @param server a `node:http` server (`callgate serve`'s, `callgate witness serve`'s).
 * @param options `timeoutMs`: longest wait for the rest of a body, ms (the server's request
 *   timeout); `limit`: most bytes read, default {@link UNREAD_BODY_DRAIN_LIMIT}.
 */
export function drainBeforeClose(server: Server, options: { timeoutMs: number; limit?: number }): void {
  const limit = options.limit ?? UNREAD_BODY_DRAIN_LIMIT;
  const current = new WeakMap<Socket, IncomingMessage>();
  const draining = new WeakMap<IncomingMessage, Promise<boolean>>();
  // One drain per request, whichever of the two hooks below starts it.
  const drain = (request: IncomingMessage): Promise<boolean> => {
    let drained = draining.get(request);
    if (drained === undefined) {
      drained = discardBody(request, limit, options.timeoutMs);
      draining.set(request, drained);
    }
    return drained;
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    current.set(request.socket, request);
    response.once('finish', () => {
      if (request.complete || request.destroyed) return;
      // discardBody never rejects; a body cut short leaves the connection unusable.
      void drain(request).then((ended) => {
        if (!ended) request.socket.destroy();
      });
    });
  });
  server.on('connection', (socket: Socket) => {
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      const request = current.get(socket);
      if (request === undefined || request.complete || request.destroyed) return destroySoon();
      socket.end();
      // discardBody never rejects; the socket is destroyed once the body is read (or cut).
      void drain(request).then(() => socket.destroy());
    };
  });
}
