// @callgate/core/adapter: what a framework adapter builds on. A `Governor` (in process, or
// `remoteGovernor` of @callgate/client against a server), the calls of a run from decision to
// outcome (`GovernedCalls`), the refusal a model reads, call ids, a reviewer that answers in
// process. Anything exported here is public and pinned by adapter.test.ts; add names deliberately.

export type { GovernedCall, GovernedCallsOptions, Refusal, StartedCall } from '../gate/governed-calls.js';
export { GovernedCalls, refusalOf, refusalText, runArguments } from '../gate/governed-calls.js';
export type { Governor } from '../gate/governor.js';
export { localGovernor } from '../gate/governor.js';
export { mintCallId } from '../gate/ids.js';
export type { ApprovalAnswerer } from '../gate/reviewer.js';
export { localReviewer } from '../gate/reviewer.js';
