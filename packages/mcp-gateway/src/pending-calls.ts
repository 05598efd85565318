// Requests a transport sends itself, without the MCP client's protocol layer, and their
// responses: what the SDK's `Protocol.request` does for a request without progress (an id, a
// time-out, cancellation by `notifications/cancelled`, the response's result or its error as an
// McpError), kept by {@link PendingCalls} for {@link HttpClientTransport.call}.
import { ErrorCode, type JSONRPCMessage, McpError } from '@modelcontextprotocol/sdk/types.js';

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}

/** The requests in flight, by id (`callgate-<n>`: never an id of the MCP client's, which are numbers). */
export class PendingCalls {
  readonly #calls = new Map<string, Pending>();
  #last = 0;

  /**
   * Sends request `method` with `params` through `send` and resolves with its result, exactly as
   * sent. `signal` cancels it (a `notifications/cancelled` through `send`) and rejects with its
   * reason (an McpError RequestTimeout unless it is one); after `timeoutMs` ms it is cancelled
   * with McpError RequestTimeout `Request timed out`.
   * @throws McpError the response's error; whatever `send` rejects with.
   */
  start(
    method: string,
    params: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs: number },
    send: (message: JSONRPCMessage) => Promise<void>,
  ): Promise<Record<string, unknown>> {
    const { signal, timeoutMs } = options;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const id = `callgate-${++this.#last}`;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const cancel = (reason: unknown) => {
        if (!this.#calls.delete(id)) return;
        done();
        send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: String(reason) },
        }).catch(() => {});
        reject(reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)));
      };
      const onAbort = () => cancel(signal?.reason);
      this.#calls.set(id, {
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(
        () => cancel(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs })),
        timeoutMs,
      );
      send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage).catch((error: unknown) => {
        if (this.#calls.delete(id)) {
          done();
          reject(error);
        }
      });
    });
  }

  /**
   * Settles the request `message` answers, when it is one of these (its result, or its error as
   * `McpError.fromError` reads it, as the SDK's protocol layer does); false for any other message.
   */
  answer(message: JSONRPCMessage): boolean {
    const value = message as { id?: unknown; method?: unknown };
    if (typeof value.id !== 'string' || value.method !== undefined) return false;
    const call = this.#calls.get(value.id);
    if (!call) return false;
    this.#calls.delete(value.id);
    if ('result' in message) {
      call.resolve(message.result as Record<string, unknown>);
      return true;
    }
    const {
      code,
      message: text,
      data,
    } = (message as { error: { code: number; message: string; data?: unknown } }).error;
    call.reject(McpError.fromError(code, text, data));
    return true;
  }

  /** Rejects every request in flight with McpError ConnectionClosed (the transport closed). */
  closeAll(): void {
    for (const call of this.#calls.values())
      call.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    this.#calls.clear();
  }
}
