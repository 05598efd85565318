// A JSON-RPC batch whose requests share an id cannot be answered: the answers could not be told
// apart (JSON-RPC 2.0 §6: the client matches them by id), and the MCP SDK's transport keys the
// requests it waits for by id, so one answer was lost and a call waiting for approval stayed
// pending. Every request whose id another request of the batch also uses, or a request of the
// session still in progress (a tool call waiting for a person, say), is refused, each with its
// own -32600, before anything runs; the batch's other messages are served. (MCP 2025-06-18
// removed batches; clients of 2025-03-26 may still send them.)
import { digitsOf, isStandIn } from './exact-json.js';

/** A JSON-RPC error response (JSON-RPC 2.0 §5.1). */
export interface RefusedRequest {
  jsonrpc: '2.0';
  id: string | number;
  error: { code: number; message: string };
}

/** True when `message` is a JSON-RPC request (a method and an id), not a notification or response. */
export const isRequest = (message: unknown): boolean =>
  message !== null &&
  typeof message === 'object' &&
  typeof (message as { method?: unknown }).method === 'string' &&
  'id' in message;

/** How an id reads in a message: a string quoted, a number as its digits. */
const idText = (id: string | number): string =>
  isStandIn(id) ? digitsOf(id) : typeof id === 'string' ? JSON.stringify(id) : String(id);

/**
 * Splits `messages` (a checked batch, or one message in an array; ids of big numbers already
 * stand-ins, see exact-json.ts) into the messages to serve and the refusals of the requests
 * whose id is used by another request of the batch, or by a request still in progress
 * (`inProgress`): -32600 Invalid Request, one per such request, addressed to its id. A string
 * id and a number id are different ids (`"1"` and `1`). Responses and notifications are always
 * served.
 */
export function splitDuplicateIds(
  messages: readonly unknown[],
  inProgress: (id: string | number) => boolean = () => false,
): {
  served: unknown[];
  refused: RefusedRequest[];
} {
  const uses = new Map<string | number, number>();
  const requestId = (message: unknown): string | number | undefined => {
    const value = message as { id?: unknown; method?: unknown };
    if (typeof value?.method !== 'string') return undefined;
    return typeof value.id === 'string' || typeof value.id === 'number' ? value.id : undefined;
  };
  for (const message of messages) {
    const id = requestId(message);
    if (id !== undefined) uses.set(id, (uses.get(id) ?? 0) + 1);
  }
  const served: unknown[] = [];
  const refused: RefusedRequest[] = [];
  for (const message of messages) {
    const id = requestId(message);
    const count = id === undefined ? 0 : (uses.get(id) ?? 0);
    if (id === undefined || (count < 2 && !inProgress(id))) {
      served.push(message);
      continue;
    }
    const why =
      count < 2
        ? `the id ${idText(id)} is used by a request of this session still in progress; each request needs an id of its own (JSON-RPC 2.0), so this one was not run`
        : `${count} requests of this batch use the id ${idText(id)}; each request needs an id of its own (JSON-RPC 2.0), so none of them was run`;
    refused.push({ jsonrpc: '2.0', id, error: { code: -32600, message: `Invalid Request: ${why}` } });
  }
  return { served, refused };
}
