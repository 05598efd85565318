// Generated runs through the MCP gateway (real SDK client, real McpServer upstream over stdio),
// checked from outside after each run, with wire choices of their own (gateway-wire.ts: id forms
// including integers beyond ±2^53, batches with decoys sharing an id, big integers and duplicate
// keys in upstream answers), the client's answers checked as they come. `npm run fuzz` runs many more. The runs go in batches of
// CALLGATE_FUZZ_CONCURRENCY (default 4) at once, each in its own session and run.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Tally } from './checks.js';
import { GatewayWorlds } from './gateway-driver.js';
import { PLAIN_WIRE, wireChoices } from './gateway-wire.js';
import { EXAMPLES, runCount, runSeed, runsOf } from './runs.js';

const worlds = new GatewayWorlds();
const concurrency = Math.max(1, Number(process.env.CALLGATE_FUZZ_CONCURRENCY ?? 4) || 4);

afterAll(() => worlds.close());

describe('generated runs through the MCP gateway', () => {
  it(
    'hold every invariant of the record',
    async () => {
      const tally = new Tally('MCP gateway');
      const runs = runCount(300);
      const batch = fc.array(fc.tuple(runsOf(2), wireChoices), {
        minLength: concurrency,
        maxLength: concurrency,
      });
      await fc.assert(
        fc.asyncProperty(batch, (generated) =>
          worlds.run(
            generated.map(([run]) => run),
            tally,
            generated.map(([, wire]) => wire),
          ),
        ),
        {
          // The counterexamples come first, one run each, and count among the property's runs.
          numRuns: EXAMPLES.length + Math.ceil(Math.max(0, runs - EXAMPLES.length) / concurrency),
          seed: runSeed(),
          examples: EXAMPLES.map(([run]) => [[[run, PLAIN_WIRE]]]),
        },
      );
      if (process.env.CALLGATE_FUZZ_RUNS) console.log(`MCP gateway: ${tally}`);
      expect(tally.runs).toBeGreaterThanOrEqual(runs);
      expect(tally.ran).toBeGreaterThan(0);
      expect(tally.normalized).toBeGreaterThan(0);
    },
    Math.max(900_000, runCount(300) * 1_000),
  );
});
