// Vitest for the adapters whose frameworks require Node 22 (ai 7, @openai/agents), and LangChain's
// again, run with the Node 22 binary from tools/node22:
//   tools/node22/node_modules/node/bin/node node_modules/vitest/vitest.mjs run --config test/conformance/vitest.node22.config.ts
// Workspace packages resolve to their TypeScript sources through an alias rather than the root
// config's `source` export condition: Vitest hands its resolve conditions to Node, and
// `eventsource-parser` (a dependency of ai) also exports TypeScript under `source`, which Node
// refuses to load from node_modules.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packages = fileURLToPath(new URL('../../packages/', import.meta.url));

/** `@callgate/<name>[/<subpath>]` → the `source` file its package's `exports` names for it. */
const sources = readdirSync(packages).flatMap((folder) => {
  const manifest = JSON.parse(readFileSync(join(packages, folder, 'package.json'), 'utf8'));
  return Object.entries(manifest.exports ?? {}).map(([subpath, conditions]) => ({
    find: new RegExp(`^${manifest.name}${subpath.slice(1)}$`),
    replacement: join(packages, folder, (conditions as { source: string }).source),
  }));
});

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { alias: sources },
  test: {
    // LangChain runs here too, so its adapter is tested on both Node lines.
    include: [
      'packages/ai-sdk/src/**/*.test.ts',
      'packages/openai-agents/src/**/*.test.ts',
      'packages/langchain/src/**/*.test.ts',
    ],
    // LangChain's generated runs are long: they run once, on Node 20.
    exclude: ['packages/langchain/src/generated.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
