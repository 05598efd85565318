import type { ToolSpec } from '@callgate/protocol';
import { asSchema, type Tool } from 'ai';

/** What callgate should know of a tool beyond what the AI SDK says: annotations, trust, idempotency. */
export type ToolSpecExtras = Partial<Omit<ToolSpec, 'name'>>;

/** A JSON Schema as callgate registers it: without `$schema` (the engine validates with draft 2020-12). */
function registrable(schema: unknown): Record<string, unknown> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return { type: 'object' };
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/**
 * The callgate tool spec of an AI SDK tool: its name, description and input JSON Schema (from
 * the tool's `inputSchema`, a Zod, Standard or JSON schema), merged with `extras`.
 */
export async function toolSpecOf(
  name: string,
  tool: Tool | undefined,
  extras: ToolSpecExtras = {},
): Promise<ToolSpec> {
  let inputSchema: Record<string, unknown> = { type: 'object' };
  if (tool?.inputSchema !== undefined) {
    try {
      inputSchema = registrable(
        await asSchema(tool.inputSchema as Parameters<typeof asSchema>[0]).jsonSchema,
      );
    } catch {
      inputSchema = { type: 'object' };
    }
  }
  return {
    name,
    ...(typeof tool?.description === 'string' ? { description: tool.description } : {}),
    inputSchema,
    ...extras,
  };
}
