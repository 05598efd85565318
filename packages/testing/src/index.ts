// @callgate/testing: what callgate's tests and benchmarks share (never published). The test
// engine, ledger fixtures and tamper helpers, the benchmarks' policy; the server app is in
// `@callgate/testing/server`. Pinned by index.test.ts.
export { BENCH_TOOL_NAMES, makeBenchInputs, makeBenchPolicy } from './bench-policy.js';
export { memoryStoreEngine, TEST_POLICY, TEST_TOOLS, testEngine } from './engine.js';
export { approvingReviewer, denyingReviewer, recordingExecutor } from './executor.js';
export type { BundleFixture, BundleFixtureOptions } from './ledger/fixture.js';
export {
  buildBundleFixture,
  FIXTURE_ORIGIN,
  FIXTURE_POLICY,
  FIXTURE_RUN_ID,
  fixtureClock,
  fixtureRunBodies,
  fixtureSigner,
} from './ledger/fixture.js';
export { InstrumentedStore } from './ledger/instrumented-store.js';
export type { TamperBase } from './ledger/tamper.js';
export { changeCharacter, expectCaught, tamperBase, ZERO_DIGEST } from './ledger/tamper.js';
