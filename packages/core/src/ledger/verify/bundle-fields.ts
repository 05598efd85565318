// The fields of a bundle beside its records (openings, policies, checkpoints, proofs, run keys),
// held to their schema as exactly as the records are: a nested object with a field its schema
// does not define, or an entry given twice, refuses the bundle (`bundle-shape`). No signature
// covers these fields, so an added field would be read by no check and vouched for by none, and a
// second copy of an entry could be read by one check and not another.
import type { AnyBundle } from '@callgate/protocol';
import type { Findings } from './report.js';

/** The parts of a zod 4 schema this walk reads (duck-typed: core does not depend on zod). */
interface SchemaNode {
  def?: { type?: string; innerType?: SchemaNode; element?: SchemaNode };
  shape?: Record<string, SchemaNode>;
}

/** Whether values of `schema` can hold an object with fields to check (else they are not walked). */
function holdsObjects(schema: SchemaNode): boolean {
  const type = schema.def?.type;
  if (type === 'object') return schema.shape !== undefined;
  if (type === 'optional' || type === 'nullable')
    return schema.def?.innerType !== undefined && holdsObjects(schema.def.innerType);
  if (type === 'array') return schema.def?.element !== undefined && holdsObjects(schema.def.element);
  return false;
}

/**
 * The paths (`openings.2.note`) of the fields of `value`'s nested objects that `schema` does not
 * define; the top level's own unknown fields are left to the caller (they are warned of).
 * `z.unknown()` values (an opening's `value`, a policy document) and arrays of plain values (proof
 * hashes) are not walked.
 */
export function nestedUnknownFields(schema: SchemaNode, value: unknown, path = ''): string[] {
  const found: string[] = [];
  walk(schema, value, path, found);
  return found;
}

function walk(schema: SchemaNode, value: unknown, path: string, found: string[]): void {
  const type = schema.def?.type;
  if (type === 'optional' || type === 'nullable') {
    if (schema.def?.innerType !== undefined) walk(schema.def.innerType, value, path, found);
    return;
  }
  if (type === 'array') {
    const element = schema.def?.element;
    if (!Array.isArray(value) || element === undefined || !holdsObjects(element)) return;
    for (let index = 0; index < value.length; index++) walk(element, value[index], `${path}${index}.`, found);
    return;
  }
  if (type !== 'object' || schema.shape === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const shape = schema.shape;
  for (const key in value) {
    const field = shape[key];
    if (field === undefined) {
      if (path !== '') found.push(`${path}${key}`);
    } else if (holdsObjects(field))
      walk(field, (value as Record<string, unknown>)[key], `${path}${key}.`, found);
  }
}

/**
 * `bundle-shape`: no nested object of `input` holds a field `schema` does not define (each is
 * named), and no opening (by commitment), policy (by digest), checkpoint, key rotation, run key
 * (by run) or consistency proof (by its two sizes) is given twice (each repeat is named, with the
 * positions of both).
 */
export function checkBundleFields(schema: SchemaNode, bundle: AnyBundle, findings: Findings): void {
  const unknown = nestedUnknownFields(schema, bundle);
  if (unknown.length > 0)
    findings.fail(
      'bundle-shape',
      `the bundle has nested fields ${bundle.format} does not define, which no check reads and no signature covers: ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? `, and ${unknown.length - 5} more` : ''}`,
    );
  const lists: Array<[string, string, unknown[] | undefined, (entry: never) => string]> = [
    ['openings', 'commitment', bundle.openings, (entry: { commitment: string }) => entry.commitment],
    ['policies', 'digest', bundle.policies, (entry: { digest: string }) => entry.digest],
    ['checkpoints', 'note', bundle.checkpoints, (entry: string) => entry],
    ['key_rotations', 'note', bundle.key_rotations, (entry: string) => entry],
    [
      'consistency',
      'sizes',
      bundle.consistency,
      (entry: { from_size: number; to_size: number }) => `${entry.from_size} to ${entry.to_size}`,
    ],
    [
      'run_keys',
      'run',
      'run_keys' in bundle ? bundle.run_keys : undefined,
      (entry: { run_id: string }) => entry.run_id,
    ],
  ];
  for (const [field, by, entries, keyOf] of lists) {
    if (entries === undefined) continue;
    const seen = new Map<string, number>();
    for (let index = 0; index < entries.length; index++) {
      const key = keyOf(entries[index] as never);
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, index);
        continue;
      }
      const shown = key.length > 60 ? `${key.slice(0, 57)}...` : key;
      findings.fail(
        'bundle-shape',
        `${field}[${index}] repeats ${field}[${first}] (the same ${by} ${JSON.stringify(shown)}): an entry is given once`,
      );
    }
  }
}
