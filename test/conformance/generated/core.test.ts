// Generated runs through core's executeStep (in-process engine on a MemoryStore, reviewers as an
// approval port), checked from outside after each run. `npm run fuzz` runs many more.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Tally } from './checks.js';
import { runThroughCore } from './core-driver.js';
import { EXAMPLES, runArbitrary, runCount, runSeed } from './runs.js';

describe('generated runs through core executeStep', () => {
  it(
    'hold every invariant of the record',
    async () => {
      const tally = new Tally('core executeStep');
      await fc.assert(
        fc.asyncProperty(runArbitrary, (run) => runThroughCore(run, tally)),
        { numRuns: runCount(300), seed: runSeed(), examples: EXAMPLES },
      );
      if (process.env.CALLGATE_FUZZ_RUNS) console.log(`core executeStep: ${tally}`);
      expect(tally.runs).toBeGreaterThanOrEqual(runCount(300));
      expect(tally.refusals).toBeGreaterThan(0);
      expect(tally.normalized).toBeGreaterThan(0);
    },
    Math.max(600_000, runCount(300) * 1_000),
  );
});
