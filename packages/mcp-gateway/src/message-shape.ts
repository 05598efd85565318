// Cheap answers to "is this a JSON-RPC message the MCP SDK's schemas accept?" for the shapes
// almost every message has, so the SDK's zod schemas (a union of four object schemas, walked
// several times per message) run only on the rest. Each check accepts a subset of what its
// schema accepts: `true` means the schema would succeed; `false` means "ask the schema".
// Schemas: MCP SDK `types.js` (JSONRPCMessageSchema, CallToolRequestSchema), MCP 2025-11-25.

/** A plain object (what JSON parsers build), never an array, a class instance or null. */
const isObject = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** `RequestIdSchema`: a string or a (safe) integer. */
const isRequestId = (value: unknown): boolean =>
  typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));

/** Params with no `_meta` (`RequestMetaSchema` has rules of its own): any other members pass. */
const isPlainParams = (value: unknown): boolean =>
  value === undefined || (isObject(value) && value._meta === undefined);

/**
 * True when `value` is plainly a JSON-RPC 2.0 request, notification or result response that
 * `JSONRPCMessageSchema` accepts: `jsonrpc` "2.0"; no member beyond those of its kind (the
 * schemas are strict); a string or safe-integer id; a string method; params, when given, an
 * object without `_meta`; a result an object without `_meta`. Error responses and anything
 * else answer false (the schema decides).
 */
export function isPlainJsonRpcMessage(value: unknown): boolean {
  if (!isObject(value) || value.jsonrpc !== '2.0') return false;
  let size = 0;
  for (const name in value) {
    if (name !== 'jsonrpc' && name !== 'id' && name !== 'method' && name !== 'params' && name !== 'result')
      return false;
    size++;
  }
  if (typeof value.method === 'string') {
    if (value.result !== undefined || !isPlainParams(value.params)) return false;
    return value.id === undefined ? size === (value.params === undefined ? 2 : 3) : isRequestId(value.id);
  }
  return (
    value.method === undefined &&
    value.params === undefined &&
    size === 3 &&
    isRequestId(value.id) &&
    isObject(value.result) &&
    value.result._meta === undefined
  );
}

/**
 * True when `message` is plainly a `tools/call` request `CallToolRequestSchema` accepts: params
 * an object with a string `name`, `arguments` absent or an object, and no `_meta` or `task`
 * (whose schemas have rules of their own).
 */
export function isPlainToolCall(message: unknown): boolean {
  if (!isObject(message) || message.method !== 'tools/call') return false;
  const params = message.params;
  return (
    isObject(params) &&
    typeof params.name === 'string' &&
    (params.arguments === undefined || isObject(params.arguments)) &&
    params._meta === undefined &&
    params.task === undefined
  );
}
