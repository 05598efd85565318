import type { ToolSpec } from '@callgate/protocol';

/** What callgate should know of a tool beyond what the SDK says: annotations, trust, idempotency. */
export type ToolSpecExtras = Partial<Omit<ToolSpec, 'name'>>;

/**
 * The callgate tool spec of an Agents SDK function tool: its name, description and parameters
 * JSON Schema (without `$schema`: the engine validates with draft 2020-12), merged with `extras`.
 */
export function toolSpecOf(
  tool: { name: string; description?: string; parameters?: unknown },
  extras: ToolSpecExtras = {},
): ToolSpec {
  const parameters = tool.parameters;
  let inputSchema: Record<string, unknown> = { type: 'object' };
  if (parameters && typeof parameters === 'object' && !Array.isArray(parameters)) {
    const { $schema: _dialect, ...rest } = parameters as Record<string, unknown>;
    inputSchema = rest;
  }
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema,
    ...extras,
  };
}
