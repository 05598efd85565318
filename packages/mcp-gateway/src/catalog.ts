// The gateway's tool catalog: every upstream tool under the name clients see (prefixed with
// its upstream's name only when two upstreams offer the same name, or when the upstream asks
// for it), its advertised form (scrubbed parameters removed) and its spec in the engine's
// registry, so the gate validates and decides it like any other tool.
import type { Engine, Logger, ToolSpec } from '@callgate/core';
import type { Trust } from '@callgate/protocol';
import { PREFIX_SEPARATOR, trustOf } from './config.js';
import type { Loose, Upstream, UpstreamTool } from './upstream.js';

/** One tool as the gateway exposes it. */
export interface GatewayTool {
  /** The name clients see and policies name. */
  name: string;
  upstream: Upstream;
  /** The tool's own name at its upstream. */
  upstreamName: string;
  /** The tool as `tools/list` shows it: the upstream's listing, renamed, scrubbed parameters removed. */
  advertised: Loose;
  trust: Trust;
}

const TOOL_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;
const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** `schema` without the scrubbed top-level parameters (from `properties` and `required`). */
export function scrubSchema(schema: Loose, scrub: readonly string[]): Loose {
  const properties = schema.properties as Loose | undefined;
  const required = schema.required as unknown[] | undefined;
  const hit =
    scrub.some((name) => properties && Object.hasOwn(properties, name)) ||
    (Array.isArray(required) && required.some((name) => scrub.includes(name as string)));
  if (!hit) return schema;
  const copy: Loose = { ...schema };
  if (properties) {
    copy.properties = Object.fromEntries(
      Object.entries(properties).filter(([name]) => !scrub.includes(name)),
    );
  }
  if (Array.isArray(required)) copy.required = required.filter((name) => !scrub.includes(name as string));
  return copy;
}

/** The schema the gate validates with (draft 2020-12): an older `$schema` marker is dropped. */
function registrySchema(schema: Loose): Loose {
  if (typeof schema.$schema !== 'string' || DRAFT_2020_12.test(schema.$schema)) return schema;
  const { $schema: _older, ...rest } = schema;
  return rest;
}

function annotationsOf(tool: UpstreamTool): ToolSpec['annotations'] | undefined {
  const given = tool.annotations;
  if (!given || typeof given !== 'object') return undefined;
  const annotations: NonNullable<ToolSpec['annotations']> = {};
  if (typeof given.title === 'string') annotations.title = given.title;
  for (const hint of HINTS) if (typeof given[hint] === 'boolean') annotations[hint] = given[hint] as boolean;
  return Object.keys(annotations).length > 0 ? annotations : undefined;
}

/**
 * The tool catalog. {@link ToolCatalog.rebuild} recomputes names and registry entries from the
 * upstreams' current lists; entries the gateway registered earlier and no longer offers are
 * removed from the registry, and names the registry holds for other tools are never replaced.
 */
export class ToolCatalog {
  readonly #engine: Engine;
  readonly #logger: Logger;
  readonly #onPolicyChange: () => void;
  #tools = new Map<string, GatewayTool>();
  #owned = new Set<string>();
  #policyDigest = '';
  #signature = '';
  #upstreams: readonly Upstream[] = [];

  /** `onPolicyChange` is called when a new policy was put in force (profiles and scrub may differ). */
  constructor(engine: Engine, logger: Logger, onPolicyChange: () => void = () => {}) {
    this.#engine = engine;
    this.#logger = logger;
    this.#onPolicyChange = onPolicyChange;
  }

  /**
   * Recomputes the catalog from `upstreams` (in configuration order). Returns true when what
   * clients see changed (names, descriptions, schemas, annotations).
   */
  rebuild(upstreams: readonly Upstream[]): boolean {
    this.#upstreams = upstreams;
    const scrub = this.#engine.policy.scrub;
    this.#policyDigest = this.#engine.policy.digest;
    const counts = new Map<string, number>();
    for (const upstream of upstreams) {
      for (const tool of upstream.tools) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
    }
    const next = new Map<string, GatewayTool>();
    for (const upstream of upstreams) {
      for (const tool of upstream.tools) {
        const prefixed = upstream.config.prefix === true || (counts.get(tool.name) ?? 0) > 1;
        const name = prefixed ? `${upstream.name}${PREFIX_SEPARATOR}${tool.name}` : tool.name;
        const skip = (why: string) =>
          this.#logger.warn(
            { upstream: upstream.name, tool: tool.name, name },
            `upstream tool skipped: ${why}`,
          );
        if (!TOOL_NAME.test(name)) {
          skip('its name must be 1 to 128 letters, digits, _ . - or /');
          continue;
        }
        if (next.has(name)) {
          skip('another upstream tool has the same name');
          continue;
        }
        if (this.#engine.registry.has(name) && !this.#owned.has(name)) {
          skip('the engine already knows a tool by that name');
          continue;
        }
        const inputSchema = scrubSchema(tool.inputSchema, scrub);
        const trust = trustOf(upstream.config, tool.name);
        const annotations = annotationsOf(tool);
        const spec: ToolSpec = {
          name,
          inputSchema: registrySchema(inputSchema),
          trust,
          ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
          ...(tool.outputSchema && typeof tool.outputSchema === 'object'
            ? { outputSchema: tool.outputSchema }
            : {}),
          ...(annotations ? { annotations } : {}),
        };
        try {
          this.#engine.registry.add(spec);
        } catch (error) {
          skip(error instanceof Error ? error.message : String(error));
          continue;
        }
        next.set(name, {
          name,
          upstream,
          upstreamName: tool.name,
          advertised: { ...tool, name, inputSchema },
          trust,
        });
      }
    }
    for (const name of this.#owned) if (!next.has(name)) this.#engine.registry.remove(name);
    this.#owned = new Set(next.keys());
    this.#tools = next;
    const signature = JSON.stringify([...next.values()].map((tool) => tool.advertised));
    const changed = signature !== this.#signature;
    this.#signature = signature;
    return changed;
  }

  /**
   * Rebuilds when a new policy was put in force since the last build, and tells clients their
   * lists may have changed (its scrub list and profiles shape what they see).
   */
  #current(): void {
    if (this.#engine.policy.digest === this.#policyDigest) return;
    this.rebuild(this.#upstreams);
    this.#onPolicyChange();
  }

  /** The tool clients know as `name`, whatever the profile. */
  get(name: string): GatewayTool | undefined {
    this.#current();
    return this.#tools.get(name);
  }

  /** The tools of `profile` (policy `profiles`; the built-in `full` holds every tool), in catalog order. */
  forProfile(profile: string): GatewayTool[] {
    this.#current();
    const policy = this.#engine.policy;
    return [...this.#tools.values()].filter((tool) => policy.inProfile(profile, tool.name));
  }

  /** Every tool the gateway registered. */
  all(): GatewayTool[] {
    this.#current();
    return [...this.#tools.values()];
  }

  /** Removes the gateway's tools from the engine's registry. */
  clear(): void {
    for (const name of this.#owned) this.#engine.registry.remove(name);
    this.#owned.clear();
    this.#tools.clear();
    this.#signature = '';
  }
}
