// How the gateway answers a refused tool call: an MCP tool result with `isError: true` carrying
// callgate's error body, never a protocol error; and the check that names arguments sent as
// JSON text where the tool's schema wants an object or an array.
import type { ErrorBody } from '@callgate/protocol';
import type { Loose } from './upstream.js';

/**
 * The `tools/call` result of a refused call: `{"error": {"kind", "message", ...}}` as text
 * content and as `structuredContent` (MCP 2025-11-25 tool results), `isError: true`.
 * `structuredContent` is left out when the tool declares an output schema, which an error body
 * would not match: clients that validate structured content (the MCP TypeScript SDK does,
 * even on errors) would otherwise turn the refusal into a protocol error.
 */
export function errorResult(error: ErrorBody['error'], options: { structured?: boolean } = {}): Loose {
  const body: ErrorBody = { error };
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    ...(options.structured === false ? {} : { structuredContent: body }),
    isError: true,
  };
}

function wants(schema: Loose | undefined, kinds: readonly string[]): boolean {
  const type = schema?.type;
  if (typeof type === 'string') return kinds.includes(type);
  if (Array.isArray(type))
    return type.some((item) => kinds.includes(item as string)) && !type.includes('string');
  return false;
}

function parsesAsContainer(text: string): 'object' | 'array' | undefined {
  const trimmed = text.trim();
  if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    if (Array.isArray(value)) return 'array';
    if (value !== null && typeof value === 'object') return 'object';
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * The argument values that arrived as JSON text (a string holding an object or array) where
 * `schema` wants an object or an array, as messages naming each one (`arguments.options`).
 * Nested objects are followed through `properties`.
 */
export function jsonEncodedArguments(schema: Loose, args: unknown, path = 'arguments'): string[] {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  const properties = schema.properties as Record<string, Loose> | undefined;
  if (!properties || typeof properties !== 'object') return [];
  const found: string[] = [];
  for (const [name, value] of Object.entries(args as Loose)) {
    const property = properties[name];
    if (!property || typeof property !== 'object') continue;
    const at = `${path}.${name}`;
    if (typeof value === 'string' && !wants(property, ['string'])) {
      const container = parsesAsContainer(value);
      if (container && wants(property, ['object', 'array'])) {
        const wanted = wants(property, ['object']) ? 'an object' : 'an array';
        found.push(
          `${at} arrived as a JSON-encoded string, but the schema wants ${wanted}: send the value itself, not its JSON text`,
        );
      }
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      found.push(...jsonEncodedArguments(property, value, at));
    }
  }
  return found;
}
