// Generated runs through the HTTP API (the Hono app, `app.request()`), driven as an agent and a
// reviewer would drive it: decisions, grant consumes, outcomes, approvals answered (and answered
// late or twice), runs ended. Bodies are written as raw JSON text, so big integers travel with
// their digits. Checked from outside after each run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Tally } from './checks.js';
import { runThroughHttp } from './http-driver.js';
import { EXAMPLES, runArbitrary, runCount, runSeed } from './runs.js';

describe('generated runs through the HTTP API', () => {
  it(
    'hold every invariant of the record',
    async () => {
      const tally = new Tally('HTTP API');
      await fc.assert(
        fc.asyncProperty(runArbitrary, (run) => runThroughHttp(run, tally)),
        { numRuns: runCount(300), seed: runSeed(), examples: EXAMPLES },
      );
      if (process.env.CALLGATE_FUZZ_RUNS) console.log(`HTTP API: ${tally}`);
      expect(tally.runs).toBeGreaterThanOrEqual(runCount(300));
      expect(tally.normalized).toBeGreaterThan(0);
    },
    Math.max(600_000, runCount(300) * 1_000),
  );
});
