import type { z } from 'zod';

type AnySchema = z.core.$ZodType;

/** The schemas directly inside `schema` (object fields, array items, union options, wrapped types). */
function childrenOf(schema: AnySchema): AnySchema[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const children: unknown[] = [];
  switch (def.type) {
    case 'object':
      // Reading the shape also runs its getters (fields defined lazily, like `outcomes`).
      children.push(...Object.values(def.shape as Record<string, unknown>), def.catchall);
      break;
    case 'array':
    case 'set':
      children.push(def.element ?? def.valueType);
      break;
    case 'record':
    case 'map':
      children.push(def.keyType, def.valueType);
      break;
    case 'union':
    case 'tuple':
      children.push(...((def.options ?? def.items ?? []) as unknown[]), def.rest);
      break;
    case 'intersection':
      children.push(def.left, def.right);
      break;
    case 'pipe':
      children.push(def.in, def.out);
      break;
    case 'lazy':
      children.push((def.getter as () => unknown)());
      break;
    default:
      children.push(def.innerType);
  }
  return children.filter((child): child is AnySchema => typeof child === 'object' && child !== null);
}

/**
 * Builds every part of a request schema now (zod builds an object schema's parser, a generated
 * function, on its first use): called once per route when the routes are mounted, so no request
 * pays for it. Walks the schema tree and parses a throwaway value with each object schema.
 *
 * @returns how many schemas it visited.
 */
export function precompileSchema(schema: z.ZodType): number {
  const seen = new Set<AnySchema>();
  const pending: AnySchema[] = [schema];
  while (pending.length > 0) {
    const next = pending.pop() as AnySchema;
    if (seen.has(next)) continue;
    seen.add(next);
    if (next._zod.def.type === 'object') (next as z.ZodType).safeParse({});
    pending.push(...childrenOf(next));
  }
  // The whole schema too (its refinements and wrappers).
  schema.safeParse({});
  return seen.size;
}
