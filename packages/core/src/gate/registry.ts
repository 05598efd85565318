import { CallgateError, type ToolSpec, toolSpecSchema } from '@callgate/protocol';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { isLosslessNumber } from 'lossless-json';
import { numberNotHeldMessage } from '../json/safe-json.js';
import { ajvLinearRegExp, linearRegexProblem, schemaPatterns } from '../regex/linear-regex.js';
import { withLinearUniqueItems } from './unique-items.js';

/** A registered tool: its spec and its compiled argument validator. */
export interface RegisteredTool {
  spec: ToolSpec;
  validate: ValidateFunction;
}

/**
 * The tool specs an engine knows. Each spec's input schema (JSON Schema draft 2020-12) is
 * compiled once with Ajv when the tool is added. Its `pattern`s and `patternProperties` run on RE2
 * (linear time), and so does `uniqueItems`, so no schema and argument pair can stall the process;
 * `format` is not asserted.
 */
export class ToolRegistry {
  // One Ajv for the registry's life: a new instance compiles the draft 2020-12 meta-schema again
  // on its first schema (tens of ms on the event loop). `addUsedSchema: false`: a tool's `$id`
  // is not a name other tools' schemas can reach (nor one they can collide on).
  // `uniqueItems` runs in linear time too (unique-items.ts).
  readonly #ajv = withLinearUniqueItems(
    new Ajv2020({
      allErrors: true,
      strict: false,
      validateFormats: false,
      addUsedSchema: false,
      code: { regExp: ajvLinearRegExp },
    }),
  );
  readonly #tools = new Map<string, RegisteredTool>();

  constructor(specs: Iterable<ToolSpec> = []) {
    for (const spec of specs) this.add(spec);
  }

  /**
   * Adds or replaces a tool.
   * @throws CallgateError `request-invalid` when the spec is malformed, its schema does not compile,
   *   or one of its patterns needs what RE2 lacks (backreferences, lookaround), naming the schema path.
   */
  add(spec: ToolSpec): void {
    const tool = this.compile(spec);
    this.#tools.set(tool.spec.name, tool);
  }

  /**
   * Checks and compiles a spec as {@link add} does, without adding it: several specs can be
   * checked before any is added ({@link addCompiled}).
   * @throws CallgateError as {@link add}.
   */
  compile(spec: ToolSpec): RegisteredTool {
    const parsed = toolSpecSchema.safeParse(spec);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CallgateError(
        'request-invalid',
        `tool spec ${JSON.stringify((spec as { name?: unknown })?.name)}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      );
    }
    for (const { path, pattern } of schemaPatterns(parsed.data.inputSchema)) {
      const problem = linearRegexProblem(pattern);
      if (problem === undefined) continue;
      throw new CallgateError(
        'request-invalid',
        `tool ${spec.name}: inputSchema ${path}: the pattern ${JSON.stringify(pattern)} is not supported (patterns run on RE2, which has no backreferences or lookaround): ${problem}`,
        { path: `inputSchema${path.slice(1)}` },
      );
    }
    const kept = keptNumberIn(parsed.data.inputSchema, 'inputSchema', 0);
    if (kept) {
      throw new CallgateError(
        'request-invalid',
        `tool ${spec.name}: ${numberNotHeldMessage(kept.path, kept.digits)}`,
        {
          path: kept.path,
        },
      );
    }
    let validate: ValidateFunction;
    try {
      validate = this.#ajv.compile(parsed.data.inputSchema);
    } catch (error) {
      throw new CallgateError(
        'request-invalid',
        `tool ${spec.name}: its input schema does not compile: ${(error as Error).message}`,
      );
    }
    return { spec: parsed.data, validate };
  }

  /** Adds (or replaces) a tool {@link compile} returned. */
  addCompiled(tool: RegisteredTool): void {
    this.#tools.set(tool.spec.name, tool);
  }

  /** Removes a tool; true when it was there. */
  remove(name: string): boolean {
    return this.#tools.delete(name);
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Every registered spec, in insertion order. */
  specs(): ToolSpec[] {
    return [...this.#tools.values()].map((tool) => tool.spec);
  }
}

/**
 * Validates `args` against the tool's input schema.
 * @throws CallgateError `tool-args-invalid` listing each failing JSON path and why.
 */
export function validateArguments(tool: RegisteredTool, args: Record<string, unknown>): void {
  if (tool.validate(args)) return;
  const problems = (tool.validate.errors ?? []).slice(0, 5).map((error) => {
    const at = `arguments${error.instancePath.replace(/\//g, '.')}`;
    const extra =
      error.keyword === 'additionalProperties'
        ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})`
        : '';
    return `${at} ${error.message ?? 'is invalid'}${extra}`;
  });
  const first = tool.validate.errors?.[0];
  throw new CallgateError('tool-args-invalid', `${tool.spec.name}: ${problems.join('; ')}`, {
    path: first ? `arguments${first.instancePath.replace(/\//g, '.')}` : 'arguments',
  });
}

/**
 * The first number of a schema that a lossless JSON parse kept as digits because a double does not
 * hold them (`"maximum": 1000.00000000000001`), with its path (`inputSchema.properties.x.maximum`).
 */
function keptNumberIn(
  value: unknown,
  path: string,
  depth: number,
): { path: string; digits: string } | undefined {
  if (isLosslessNumber(value)) return { path, digits: value.value };
  if (value === null || typeof value !== 'object' || depth > 128) return undefined;
  const entries = Array.isArray(value)
    ? value.map((item, index) => [`${path}[${index}]`, item] as const)
    : Object.entries(value).map(
        ([key, item]) =>
          [
            /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`,
            item,
          ] as const,
      );
  for (const [at, item] of entries) {
    const found = keptNumberIn(item, at, depth + 1);
    if (found) return found;
  }
  return undefined;
}
