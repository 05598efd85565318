import { silentLogger } from '@callgate/core';
import { testEngine } from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { scrubSchema, ToolCatalog } from './catalog.js';
import type { UpstreamConfig } from './config.js';
import type { Upstream, UpstreamTool } from './upstream.js';

const POLICY = `
version: 1
default: deny
scrub: [force]
profiles:
  observe: [search, "docs__*"]
rules: []
`;

function upstream(config: UpstreamConfig, tools: UpstreamTool[]): Upstream {
  return { name: config.name, config, tools } as unknown as Upstream;
}

const objectSchema = (properties: Record<string, unknown>, required: string[] = []) => ({
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties,
  required,
});

describe('scrubSchema', () => {
  it('removes scrubbed parameters from properties and required, leaving the rest as it was', () => {
    const schema = objectSchema({ path: { type: 'string' }, force: { type: 'boolean' } }, ['path', 'force']);
    expect(scrubSchema(schema, ['force'])).toEqual(objectSchema({ path: { type: 'string' } }, ['path']));
    expect(scrubSchema(schema, ['other'])).toBe(schema);
  });
});

describe('ToolCatalog', () => {
  it('prefixes only colliding names, registers specs and follows changes', async () => {
    const { engine } = await testEngine({ policy: POLICY });
    const catalog = new ToolCatalog(engine, silentLogger);
    const docs = upstream({ name: 'docs', stdio: { command: 'x' }, trust: 'untrusted' }, [
      {
        name: 'search',
        inputSchema: objectSchema({ q: { type: 'string' }, force: { type: 'boolean' } }, ['q']),
      },
      {
        name: 'fetch',
        inputSchema: objectSchema({ url: { type: 'string' } }),
        annotations: { readOnlyHint: true, junk: 3 },
      },
    ]);
    const code = upstream({ name: 'code', stdio: { command: 'y' } }, [
      { name: 'search', description: 'code search', inputSchema: { type: 'object' } },
    ]);
    expect(catalog.rebuild([docs, code])).toBe(true);
    expect(catalog.all().map((tool) => tool.name)).toEqual(['docs__search', 'fetch', 'code__search']);
    expect(catalog.get('docs__search')?.advertised.inputSchema).toEqual(
      objectSchema({ q: { type: 'string' } }, ['q']),
    );
    expect(engine.registry.get('docs__search')?.spec).toMatchObject({ trust: 'untrusted' });
    expect(engine.registry.get('docs__search')?.spec.inputSchema).not.toHaveProperty('$schema');
    expect(engine.registry.get('fetch')?.spec.annotations).toEqual({ readOnlyHint: true });
    expect(catalog.forProfile('observe').map((tool) => tool.name)).toEqual(['docs__search']);
    expect(catalog.forProfile('unknown')).toEqual([]);
    expect(catalog.rebuild([docs, code])).toBe(false);

    // The collision goes away: names lose their prefix, stale registry entries go.
    (code as { tools: UpstreamTool[] }).tools = [];
    expect(catalog.rebuild([docs, code])).toBe(true);
    expect(catalog.all().map((tool) => tool.name)).toEqual(['search', 'fetch']);
    expect(engine.registry.has('docs__search')).toBe(false);
    expect(engine.registry.has('code__search')).toBe(false);
    catalog.clear();
    expect(engine.registry.has('search')).toBe(false);
  });

  it('never replaces a tool the engine already knows, and skips tools it cannot validate', async () => {
    const { engine } = await testEngine({ policy: POLICY });
    const catalog = new ToolCatalog(engine, silentLogger);
    const files = upstream({ name: 'files', stdio: { command: 'x' }, prefix: true }, [
      { name: 'read', inputSchema: { type: 'object' } },
      { name: 'bad', inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } },
      { name: 'spaces in name', inputSchema: { type: 'object' } },
    ]);
    const local = upstream({ name: 'local', stdio: { command: 'y' } }, [
      { name: 'read_file', inputSchema: { type: 'object' } },
    ]);
    catalog.rebuild([files, local]);
    expect(catalog.all().map((tool) => tool.name)).toEqual(['files__read']);
    expect(engine.registry.get('read_file')?.spec.annotations).toEqual({ readOnlyHint: true });
  });

  it('rebuilds when a new policy is put in force', async () => {
    const { engine } = await testEngine({ policy: POLICY });
    let told = 0;
    const catalog = new ToolCatalog(engine, silentLogger, () => told++);
    catalog.rebuild([
      upstream({ name: 'docs', stdio: { command: 'x' } }, [
        { name: 'search', inputSchema: objectSchema({ force: {}, keep: {} }) },
      ]),
    ]);
    expect(Object.keys(catalog.get('search')?.advertised.inputSchema.properties as object)).toEqual(['keep']);
    const { loadPolicy } = await import('@callgate/core');
    engine.setPolicy(loadPolicy(POLICY.replace('scrub: [force]', 'scrub: [keep]')));
    expect(Object.keys(catalog.get('search')?.advertised.inputSchema.properties as object)).toEqual([
      'force',
    ]);
    expect(told).toBe(1);
  });
});
