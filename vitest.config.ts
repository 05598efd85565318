import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their TypeScript sources (the `source` export condition),
// so `vitest run` needs no build step.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
