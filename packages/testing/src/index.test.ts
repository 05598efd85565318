import { describe, expect, it } from 'vitest';
import * as browser from './browser.js';
import * as api from './index.js';
import * as server from './server.js';

// `@callgate/testing/ai-sdk` is not imported here: the AI SDK loads only under the Node 22 config
// (its eventsource-parser exports TypeScript under the `source` condition).
describe('@callgate/testing', () => {
  it('exports exactly the pinned names, by subpath', () => {
    expect({
      '.': Object.keys(api).sort(),
      './server': Object.keys(server).sort(),
      './browser': Object.keys(browser).sort(),
    }).toMatchInlineSnapshot(`
      {
        ".": [
          "BENCH_TOOL_NAMES",
          "FIXTURE_ORIGIN",
          "FIXTURE_POLICY",
          "FIXTURE_RUN_ID",
          "InstrumentedStore",
          "TEST_POLICY",
          "TEST_TOOLS",
          "ZERO_DIGEST",
          "approvingReviewer",
          "buildBundleFixture",
          "changeCharacter",
          "denyingReviewer",
          "expectCaught",
          "fixtureClock",
          "fixtureRunBodies",
          "fixtureSigner",
          "makeBenchInputs",
          "makeBenchPolicy",
          "memoryStoreEngine",
          "recordingExecutor",
          "tamperBase",
          "testEngine",
        ],
        "./browser": [
          "CHROMIUM",
          "CHROMIUM_ARGS",
          "launchChromium",
        ],
        "./server": [
          "POLICY",
          "TOOLS",
          "memoryEngine",
          "testApp",
        ],
      }
    `);
  });
});
