// docs/architecture.md's arrows, held against the packages' own dependencies: every workspace
// package is on the map, and no package depends on one above it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const workspaces: string[] = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces;
const manifests = workspaces.map((folder) =>
  JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8')),
);
const callgateDependencies = (name: string): string[] => {
  const manifest = manifests.find((each) => each.name === name);
  return Object.keys({ ...manifest?.dependencies, ...manifest?.peerDependencies }).filter((dependency) =>
    dependency.startsWith('@callgate/'),
  );
};

/** What each package may import, as the map draws it. */
const ALLOWED: Record<string, string[]> = {
  '@callgate/protocol': [],
  '@callgate/core': ['@callgate/protocol'],
  '@callgate/store-sqlite': ['@callgate/protocol', '@callgate/core'],
  '@callgate/store-postgres': ['@callgate/protocol', '@callgate/core'],
  // core's `callgate-normalize/1` rule (`@callgate/core/json`), applied before sending.
  '@callgate/client': ['@callgate/protocol', '@callgate/core'],
  '@callgate/mcp-gateway': ['@callgate/protocol', '@callgate/core'],
  '@callgate/server': ['@callgate/protocol', '@callgate/core', '@callgate/mcp-gateway'],
  '@callgate/ai-sdk': ['@callgate/protocol', '@callgate/core'],
  '@callgate/openai-agents': ['@callgate/protocol', '@callgate/core'],
  '@callgate/langchain': ['@callgate/protocol', '@callgate/core'],
  // Private: what the tests and benchmarks share; no published package depends on it.
  '@callgate/testing': ['@callgate/protocol', '@callgate/core', '@callgate/server'],
  '@callgate/cli': [
    '@callgate/protocol',
    '@callgate/core',
    '@callgate/store-sqlite',
    '@callgate/store-postgres',
    '@callgate/client',
    '@callgate/mcp-gateway',
    '@callgate/server',
  ],
};

describe('docs/architecture.md', () => {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

  it('shows every workspace package', () => {
    for (const manifest of manifests) expect(page, manifest.name).toContain(manifest.name);
  });

  it('draws arrows the packages keep: nothing depends on a package above it', () => {
    for (const manifest of manifests) {
      const allowed = ALLOWED[manifest.name];
      expect(allowed, `${manifest.name} is on the map`).toBeDefined();
      for (const dependency of callgateDependencies(manifest.name)) {
        expect(allowed, `${manifest.name} → ${dependency}`).toContain(dependency);
      }
    }
  });

  it('keeps private packages out of what is published', () => {
    const privates = manifests.filter((manifest) => manifest.private).map((manifest) => manifest.name);
    expect(privates).toContain('@callgate/testing');
    for (const manifest of manifests.filter((each) => !each.private)) {
      for (const dependency of callgateDependencies(manifest.name))
        expect(privates, `${manifest.name} → ${dependency}`).not.toContain(dependency);
    }
  });
});
