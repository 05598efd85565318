// A request answered before its body was read (a body over its limit answered 413, a missing key
// 401, an unknown path 404) still has its body on the way. Node closes a connection the client
// asked to close (`Connection: close`, as Python's urllib sends) right after the answer; closing a
// socket whose unread bytes are still arriving resets it (TCP RST), so a client that writes its
// whole body before it reads sees a broken pipe instead of the answer. So such a connection is
// half-closed after the answer and the rest of the body read and discarded, up to a bound (a body
// longer than that is cut, as before), before the socket is destroyed.
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** Most bytes of an unread body read and discarded before answering (64 MiB). */
export const UNREAD_BODY_DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * Reads and discards what is left of `incoming`'s body, until it ends, fails, closes, or more than
 * `limit` bytes have passed; resolves then (never rejects). Time is bounded by the server's
 * request timeout, which closes the connection of a body that stops short.
 *
 * @param limit bytes, at most.
 * @returns whether the body was read to its end.
 */
export function discardBody(incoming: IncomingMessage, limit: number): Promise<boolean> {
  if (incoming.complete || incoming.readableEnded) return Promise.resolve(true);
  if (incoming.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const done = (ended: boolean) => {
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
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('error', onFailed);
    incoming.once('close', onFailed);
    incoming.resume();
  });
}

/**
 * Makes `server` answer first, then drain, then close: when Node closes a connection after an
 * answer (the client sent `Connection: close`, or `@hono/node-server` gives up on a keep-alive
 * body) while the request's body is still arriving, the connection is half-closed instead (the
 * answer and a FIN go out), the rest of the body is read and discarded (at most `limit` bytes;
 * the request timeout bounds the time), and only then is the socket destroyed. A client that
 * writes its whole body before reading so gets the answer — a 413 sent before any byte of the body
 * was read included — and a client that waits for the answer before sending gets it at once.
 *
 * @param server a `node:http` server (`callgate serve`'s, `callgate witness serve`'s).
 * @param limit bytes; default {@link UNREAD_BODY_DRAIN_LIMIT}.
 */
export function drainBeforeClose(server: Server, limit = UNREAD_BODY_DRAIN_LIMIT): void {
  const current = new WeakMap<Socket, IncomingMessage>();
  server.on('request', (request: IncomingMessage) => current.set(request.socket, request));
  server.on('connection', (socket: Socket) => {
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      const request = current.get(socket);
      if (request === undefined || request.complete || request.destroyed) return destroySoon();
      socket.end();
      // discardBody never rejects; the socket is destroyed once the body is read (or cut).
      void discardBody(request, limit).then(() => socket.destroy());
    };
  });
}
