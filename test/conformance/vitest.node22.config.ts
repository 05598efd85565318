// Vitest for the adapters whose frameworks require Node 22 (ai 7, @openai/agents), and LangChain's
// again, run with the Node 22 binary from tools/node22:
//   tools/node22/node_modules/node/bin/node node_modules/vitest/vitest.mjs run --config test/conformance/vitest.node22.config.ts
// Workspace packages resolve to their TypeScript sources through an alias rather than the root
// config's `source` export condition: Vitest hands its resolve conditions to Node, and
// `eventsource-parser` (a dependency of ai) also exports TypeScript under `source`, which Node
// refuses to load from node_modules.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packages = fileURLToPath(new URL('../../packages/', import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { alias: [{ find: /^@callgate\/([a-z-]+)$/, replacement: `${packages}$1/src/index.ts` }] },
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
