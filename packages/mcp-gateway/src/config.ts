// The `upstreams:` section of callgate.yaml: which MCP servers the gateway fronts and how it
// reaches them. Parsed from plain JSON (the YAML already loaded by the caller).
import { parseDuration } from '@callgate/core';
import { CallgateError, formatPath, problemOf, type Trust } from '@callgate/protocol';
import { z } from 'zod';

/** How to start an upstream MCP server as a child process speaking MCP over stdio. */
export interface StdioUpstream {
  command: string;
  args?: string[];
  /** Added to a minimal safe environment (PATH, HOME, ...); the gateway's own environment is not passed. */
  env?: Record<string, string>;
  cwd?: string;
}

/** Where to reach an upstream MCP server over Streamable HTTP (MCP 2025-11-25). */
export interface HttpUpstream {
  url: string;
  /** Sent with every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
}

/**
 * Trust of an upstream's tool output: one level for every tool, or a default and per-tool
 * levels keyed by the upstream's own tool names (before any prefix).
 */
export type UpstreamTrust = Trust | { default?: Trust; tools?: Record<string, Trust> };

/** One upstream MCP server. Exactly one of `stdio` and `http` is set. */
export interface UpstreamConfig {
  /** Letters, digits, `-` and `_` (no `__`); prefixes its tool names when they collide. */
  name: string;
  stdio?: StdioUpstream;
  http?: HttpUpstream;
  /** Default `trusted`. */
  trust?: UpstreamTrust;
  /** Always name this upstream's tools `<name>__<tool>`, collision or not. Default false. */
  prefix?: boolean;
  /** Longest time one forwarded request may take, in ms (progress resets it). Default 300,000. */
  timeoutMs?: number;
}

/** Separator between an upstream's name and its tool's name when names are prefixed. */
export const PREFIX_SEPARATOR = '__';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const trustSchema = z.enum(['trusted', 'untrusted']);
const stringRecord = z.record(z.string(), z.string());

const upstreamSchema = z
  .object({
    name: z
      .string()
      .regex(NAME, 'use 1 to 63 letters, digits, - and _, starting with a letter or digit')
      .refine((name) => !name.includes(PREFIX_SEPARATOR), `must not contain "${PREFIX_SEPARATOR}"`),
    stdio: z
      .object({
        command: z.string().min(1),
        args: z.array(z.string()).optional(),
        env: stringRecord.optional(),
        cwd: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    http: z
      .object({
        url: z.url({ protocol: /^https?$/ }),
        headers: stringRecord.optional(),
      })
      .strict()
      .optional(),
    trust: z
      .union([
        trustSchema,
        z
          .object({ default: trustSchema.optional(), tools: z.record(z.string(), trustSchema).optional() })
          .strict(),
      ])
      .optional(),
    prefix: z.boolean().optional(),
    // Numbers are held by parseDuration (one rule for every duration), not here.
    timeout: z.union([z.number(), z.string()]).optional(),
    timeoutMs: z.number().optional(),
  })
  .strict()
  .refine((value) => (value.stdio === undefined) !== (value.http === undefined), {
    message: 'set exactly one of `stdio` and `http`',
  });

/**
 * A problem with the upstream entry at `path` (from `upstreams` on): the message names the field
 * as every config message does (`upstreams[0].timeout: ...`), `details.path` holds its keys.
 */
function invalid(path: (string | number)[], problem: string): CallgateError {
  return new CallgateError('request-invalid', `${formatPath(path)}: ${problem}`, { path });
}

function durationMs(value: number | string, path: (string | number)[], written: string | undefined): number {
  const parsed = parseDuration(value, written);
  if ('problem' in parsed) throw invalid(path, parsed.problem);
  return parsed.ms;
}

/**
 * Reads the `upstreams:` section of callgate.yaml (already parsed from YAML): a list of
 * upstreams, each `{ name, stdio | http, trust?, prefix?, timeout? }` where `timeout` is ms or
 * a duration such as `30s` or `5m` (the grammar of policy durations). The older key
 * `timeoutMs` (milliseconds) is still read, and `options.warn` told that it is deprecated.
 *
 * @returns the upstreams in the order given, `timeout` normalized to `timeoutMs`.
 * @throws CallgateError `request-invalid` naming the first offending entry and field, or a
 *   name used twice.
 */
export function parseUpstreams(
  value: unknown,
  options: {
    warn?: (message: string) => void;
    /**
     * The number at a path (from the file's root) as its text wrote it (`0x10` for 16), so a
     * duration is held to decimal digits; without it, numbers are judged by value.
     */
    written?: (path: readonly (string | number)[]) => string | undefined;
  } = {},
): UpstreamConfig[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(['upstreams'], 'must be a list');
  const names = new Set<string>();
  return value.map((entry, index) => {
    const parsed = upstreamSchema.safeParse(entry);
    if (!parsed.success) {
      const problem = problemOf(parsed.error);
      throw invalid(['upstreams', index, ...(problem.path as (string | number)[])], problem.message);
    }
    const { timeout, timeoutMs, ...rest } = parsed.data;
    if (names.has(rest.name)) {
      throw invalid(['upstreams', index, 'name'], `${rest.name} is used twice`);
    }
    names.add(rest.name);
    if (timeoutMs !== undefined) {
      // The one camelCase key among snake_case ones: still read, so no config breaks.
      options.warn?.(
        `upstreams[${index}].timeoutMs is deprecated: write timeout: ${timeoutMs}ms (any duration: 30s, 5m)${timeout !== undefined ? '; timeout wins over it' : ''}`,
      );
    }
    const ms =
      timeout !== undefined
        ? durationMs(
            timeout,
            ['upstreams', index, 'timeout'],
            options.written?.(['upstreams', index, 'timeout']),
          )
        : timeoutMs !== undefined
          ? durationMs(
              timeoutMs,
              ['upstreams', index, 'timeoutMs'],
              options.written?.(['upstreams', index, 'timeoutMs']),
            )
          : undefined;
    return { ...rest, ...(ms !== undefined ? { timeoutMs: ms } : {}) } as UpstreamConfig;
  });
}

/** The trust of one upstream tool (by its upstream name) under `config.trust`. */
export function trustOf(config: UpstreamConfig, tool: string): Trust {
  const trust = config.trust;
  if (trust === undefined) return 'trusted';
  if (typeof trust === 'string') return trust;
  return trust.tools?.[tool] ?? trust.default ?? 'trusted';
}
