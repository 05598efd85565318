// The checks of callgate.yaml's values beyond its schema, each problem named with its file, line,
// column and field (`FILE:L:C: field: problem`): schema problems in callgate's words, whole numbers
// as written, tool input schemas compiled as the gate will, witnesses and upstreams.
import { resolve } from 'node:path';
import { ToolRegistry, type ToolSpec, type WholeNumberBounds, wholeNumberProblem } from '@callgate/core';
import { parseWitnessKey, repeatedWitness, type WitnessKey } from '@callgate/core/ledger';
import { parseUpstreams, type UpstreamConfig } from '@callgate/mcp-gateway';
import { CallgateError, formatPath, isCallgateError, problemOf } from '@callgate/protocol';
import type { z } from 'zod';
import type { ServerConfig } from './config.js';
import type { YamlPosition, YamlText } from './yaml-file.js';

/**
 * The message of a problem at `field` (`tools[0].name`) of `file`, in the one format of every
 * config and policy error, a compiler's: `FILE:LINE:COLUMN: FIELD: PROBLEM` (`FILE: FIELD:
 * PROBLEM` when the position is not known), and the details to send (`file`, `path`: the field,
 * `line`, `column`). The file and the field stay apart: `callgate.yaml:1:7: port: …`, never
 * `callgate.yaml.port`, which reads as a file name.
 */
export function located(
  file: string,
  field: string,
  problem: string,
  position: YamlPosition | undefined,
): [string, Record<string, unknown>] {
  const where = position ? `${file}:${position.line}:${position.column}` : file;
  const message = field === '' ? `${where}: ${problem}` : `${where}: ${field}: ${problem}`;
  if (!position) return [message, { file, path: field }];
  return [message, { file, path: field, line: position.line, column: position.column }];
}

/**
 * Validates the value of a YAML file with `schema`.
 * @throws CallgateError `request-invalid` naming the element and field from `file` on
 *   (`/etc/callgate.yaml:3:13: tools[0].name: expected string, received number`),
 *   with `details.path`, and `details.line` and `details.column` when the text has them.
 */
export function validateYaml<Schema extends z.ZodType>(
  schema: Schema,
  source: YamlText,
  value: unknown,
  file: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problem = problemOf(parsed.error);
  const position = source.positionOf(problem.path, problem.unknownField ? 'key' : 'value');
  throw new CallgateError(
    'request-invalid',
    ...located(file, formatPath(problem.path), problem.message, position),
  );
}

/** The whole-number fields of callgate.yaml, with their bounds (as `serverConfigSchema` has them). */
const WHOLE_NUMBER_FIELDS: ReadonlyArray<readonly [readonly string[], WholeNumberBounds]> = [
  [['port'], { minimum: 0, maximum: 65535 }],
  [['witnesses', 'quorum'], { minimum: 1 }],
];

/**
 * Holds each whole-number field to its number as written: the YAML reader gives 16 for `0x10`,
 * 8 for `0o10`, 7 for `7.0`, 5 for `+5`; core's one rule refuses them all (and `-0`, `010`).
 * @throws CallgateError `request-invalid` naming the field, its line and column, and the text.
 */
export function holdWrittenNumbers(source: YamlText, file: string): void {
  for (const [path, bounds] of WHOLE_NUMBER_FIELDS) {
    const written = source.numberSource(path);
    if (written === undefined) continue;
    const problem = wholeNumberProblem(Number(written), bounds, written);
    if (problem !== undefined)
      throw new CallgateError(
        'request-invalid',
        ...located(file, formatPath(path), problem, source.positionOf(path)),
      );
  }
}

/**
 * Compiles each tool's input schema as the gate will (JSON Schema 2020-12 with Ajv, its patterns
 * on RE2), so a schema that cannot be used is refused at its line, not when the server starts.
 * @param within where the list sits in `file` (`['tools']` in callgate.yaml, `[]` in a tools file).
 * @throws CallgateError `request-invalid` in the format of {@link located}, naming the tool's field.
 */
export function compileTools(
  tools: ToolSpec[],
  source: YamlText,
  file: string,
  within: (string | number)[],
): ToolSpec[] {
  const registry = new ToolRegistry();
  for (const [index, spec] of tools.entries()) {
    try {
      registry.compile(spec);
    } catch (error) {
      if (!isCallgateError(error)) throw error;
      const inner =
        typeof error.details.path === 'string' ? error.details.path.split(/[./]/) : ['inputSchema'];
      const path = [...within, index, ...inner.map((step) => (/^\d+$/.test(step) ? Number(step) : step))];
      const problem = error.message.replace(/^tool [^:]*: (?:inputSchema [^:]*: )?/, '');
      throw new CallgateError(
        'request-invalid',
        ...located(file, formatPath(path), problem, source.positionOf(path)),
      );
    }
  }
  return tools;
}

/**
 * Holds `witnesses:` to what the witnessing will take, with each problem's line and column: every
 * `key` a witness key (C2SP tlog-cosignature vkey), no witness listed twice (a quorum counts
 * distinct witnesses), and a `quorum` the servers can meet.
 * @throws CallgateError `request-invalid` in the format of {@link located}.
 */
export function readWitnesses(
  witnesses: NonNullable<ServerConfig['witnesses']>,
  source: YamlText,
  file: string,
): NonNullable<ServerConfig['witnesses']> {
  const refuse = (path: (string | number)[], problem: string) =>
    new CallgateError(
      'request-invalid',
      ...located(file, formatPath(path), problem, source.positionOf(path)),
    );
  const keys: WitnessKey[] = [];
  for (const [index, server] of witnesses.servers.entries()) {
    try {
      keys.push(parseWitnessKey(server.key));
    } catch (error) {
      throw refuse(['witnesses', 'servers', index, 'key'], (error as Error).message);
    }
  }
  const repeated = repeatedWitness(keys);
  if (repeated !== undefined)
    throw refuse(
      ['witnesses', 'servers', repeated[1], 'key'],
      `the same witness as witnesses.servers[${repeated[0]}]: a quorum counts distinct witnesses, list each once`,
    );
  const quorum = witnesses.quorum;
  if (quorum !== undefined && quorum > witnesses.servers.length)
    throw refuse(
      ['witnesses', 'quorum'],
      `${quorum} cannot be met by ${witnesses.servers.length} server${witnesses.servers.length === 1 ? '' : 's'}`,
    );
  return witnesses;
}

/**
 * Validates `upstreams:` with the gateway's own rules and resolves each stdio upstream's `cwd`
 * against `base` (the config file's folder, also the default `cwd`). A `command` that is a path
 * (`./bin/server`) is started from that `cwd`; a bare name (`npx`) is looked up on PATH.
 */
export function readUpstreams(
  value: unknown,
  source: YamlText,
  file: string,
  base: string,
  warnings: string[],
): UpstreamConfig[] {
  let upstreams: UpstreamConfig[];
  try {
    upstreams = parseUpstreams(value, {
      warn: (message) => warnings.push(`${file}: ${message}`),
      written: (path) => source.numberSource(path),
    });
  } catch (error) {
    if (!isCallgateError(error) || !Array.isArray(error.details.path)) throw error;
    // parseUpstreams names the field from `upstreams` on (`upstreams[0].stdio.command: ...`) and
    // gives its path as keys, to find its line and column.
    const path = error.details.path as (string | number)[];
    const field = formatPath(path);
    const problem = error.message.startsWith(`${field}: `)
      ? error.message.slice(field.length + 2)
      : error.message;
    throw new CallgateError('request-invalid', ...located(file, field, problem, source.positionOf(path)));
  }
  // A relative `command` and relative `args` are read by the child against its `cwd`, so
  // resolving `cwd` here makes every relative path in an upstream relative to this file.
  return upstreams.map((upstream) =>
    upstream.stdio
      ? { ...upstream, stdio: { ...upstream.stdio, cwd: resolve(base, upstream.stdio.cwd ?? '.') } }
      : upstream,
  );
}
