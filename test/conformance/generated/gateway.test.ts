// Generated runs through the MCP gateway (real SDK client, real McpServer upstream over stdio),
// checked from outside after each run. `npm run fuzz` runs many more.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayWorld } from './gateway-driver.js';
import { EXAMPLES, runCount, runSeed, runsOf, Tally } from './runs.js';

const world = new GatewayWorld();

beforeAll(() => world.start(), 30_000);
afterAll(() => world.close());

describe('generated runs through the MCP gateway', () => {
  it(
    'hold every invariant of the record',
    async () => {
      const tally = new Tally('MCP gateway');
      let number = 0;
      await fc.assert(
        fc.asyncProperty(runsOf(2), (run) => world.run(run, number++, tally)),
        { numRuns: runCount(300), seed: runSeed(), examples: EXAMPLES },
      );
      if (process.env.CALLGATE_FUZZ_RUNS) console.log(`MCP gateway: ${tally}`);
      expect(tally.runs).toBeGreaterThanOrEqual(runCount(300));
      expect(tally.ran).toBeGreaterThan(0);
      expect(tally.normalized).toBeGreaterThan(0);
    },
    Math.max(900_000, runCount(300) * 1_000),
  );
});
