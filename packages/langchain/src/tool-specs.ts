import type { ToolSpec } from '@callgate/protocol';
import { toJsonSchema } from '@langchain/core/utils/json_schema';

/** What callgate should know of a tool beyond what LangChain says: annotations, trust, idempotency. */
export type ToolSpecExtras = Partial<Omit<ToolSpec, 'name'>>;

/**
 * The callgate tool spec of a LangChain tool: its name, description and input JSON Schema (from
 * its Zod, Standard or JSON schema; without `$schema`, as the engine validates with draft
 * 2020-12), merged with `extras`. A schema that cannot be converted registers as any object.
 */
export function toolSpecOf(
  tool: { name: string; description?: unknown; schema?: unknown },
  extras: ToolSpecExtras = {},
): ToolSpec {
  let inputSchema: Record<string, unknown> = { type: 'object' };
  if (tool.schema !== undefined && tool.schema !== null) {
    try {
      const converted = toJsonSchema(tool.schema as Parameters<typeof toJsonSchema>[0]) as Record<
        string,
        unknown
      >;
      const { $schema: _dialect, ...rest } = converted;
      if (rest && typeof rest === 'object' && !Array.isArray(rest)) inputSchema = rest;
    } catch {
      inputSchema = { type: 'object' };
    }
  }
  return {
    name: tool.name,
    ...(typeof tool.description === 'string' && tool.description ? { description: tool.description } : {}),
    inputSchema,
    ...extras,
  };
}
