// Test and benchmark helpers of the ledger, for other packages' tests (CLI, server, stores) and
// for the benchmarks. Not part of the engine: meant for a `@callgate/core/testing` subpath.
export type { AppendTiming, VerifyTiming } from './benchmark.js';
export {
  buildLargeBundle,
  syntheticBody,
  timeAppends,
  timeAppendThroughput,
  timeVerify,
} from './benchmark.js';
export type { BundleFixture, BundleFixtureOptions } from './fixture.js';
export {
  buildBundleFixture,
  FIXTURE_ORIGIN,
  FIXTURE_POLICY,
  FIXTURE_RUN_ID,
  fixtureClock,
  fixtureRunBodies,
  fixtureSigner,
} from './fixture.js';
export { InstrumentedStore } from './instrumented-store.js';
export type { TamperBase } from './tamper.js';
export { changeCharacter, expectCaught, tamperBase, ZERO_DIGEST } from './tamper.js';
