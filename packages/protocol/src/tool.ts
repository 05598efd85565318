import { z } from 'zod';

/** MCP tool annotations (MCP 2025-11-25 `ToolAnnotations`), all optional hints. */
export const toolAnnotationsSchema = z
  .object({
    title: z.string().optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .catchall(z.unknown());
export type ToolAnnotations = z.infer<typeof toolAnnotationsSchema>;

/** Whether a tool's output may be trusted as instructions-free data. */
export const trustSchema = z.enum(['trusted', 'untrusted']);
export type Trust = z.infer<typeof trustSchema>;

/**
 * A tool spec: what the registry knows of one tool. `inputSchema` is a JSON Schema (draft
 * 2020-12) for the call's arguments object. `idempotencyKey` is a dotted path into the
 * arguments (e.g. `"invoice.id"`) whose value identifies a side effect; a completed call with
 * the same key blocks a later one.
 */
export const toolSpecSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_.\-/]+$/, 'tool names use letters, digits, _ . - /'),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: toolAnnotationsSchema.optional(),
  trust: trustSchema.optional(),
  idempotencyKey: z.string().optional(),
});
export type ToolSpec = z.infer<typeof toolSpecSchema>;
