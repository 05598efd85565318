// Tool specs agents registered, kept in the store so that a restarted server knows them before its
// first decision (docs/ledger.md, invariant 7): no spurious `tool-not-found` after a restart.
import type { ToolSpec } from '@callgate/protocol';
import { canonicalJson } from '../json/canonical.js';
import type { Store } from '../store/store.js';
import type { Logger } from './logger.js';
import type { ToolRegistry } from './registry.js';

/** The store meta key of the tool specs agents registered: a JSON array of specs. */
const AGENT_TOOLS_META = 'agent-tools';

async function storedTools(store: Store): Promise<ToolSpec[]> {
  return (await storedToolsWithText(store)).specs;
}

async function storedToolsWithText(store: Store): Promise<{ specs: ToolSpec[]; text?: string }> {
  const text = await store.getMeta(AGENT_TOOLS_META);
  if (text === undefined) return { specs: [] };
  try {
    const specs = JSON.parse(text) as unknown;
    return Array.isArray(specs) ? { specs: specs as ToolSpec[], text } : { specs: [] };
  } catch {
    return { specs: [] };
  }
}

/** Adds `specs` to the stored agent tools; a name already stored keeps its spec. */
export async function rememberAgentTools(store: Store, specs: readonly ToolSpec[]): Promise<void> {
  if (specs.length === 0) return;
  const { specs: known, text } = await storedToolsWithText(store);
  const names = new Set(known.map((spec) => spec.name));
  const added = specs.filter((spec) => !names.has(spec.name));
  if (added.length === 0) return;
  // The stored text is the canonical JSON of an array: the new specs are appended to it, so a
  // registration costs the size of what it adds, not of every tool registered before.
  const tail = added.map((spec) => canonicalJson(spec)).join(',');
  const appendable = text !== undefined && known.length > 0 && text.startsWith('[') && text.endsWith(']');
  await store.setMeta(
    AGENT_TOOLS_META,
    appendable ? `${text.slice(0, -1)},${tail}]` : canonicalJson([...known, ...added]),
  );
}

/** Adds the stored agent tools `registry` does not know (configured tools win); logs a spec that no longer compiles. */
export async function restoreAgentTools(store: Store, registry: ToolRegistry, logger: Logger): Promise<void> {
  for (const spec of await storedTools(store)) {
    if (registry.has(spec.name)) continue;
    try {
      registry.add(spec);
    } catch (error) {
      logger.warn({ tool: spec.name, error: String(error) }, 'a stored tool spec was not restored');
    }
  }
}
