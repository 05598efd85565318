// @callgate/openai-agents: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { GovernedCall, Refusal } from '@callgate/core/adapter';
export { refusalText } from '@callgate/core/adapter';
export type { AgentsGateOptions } from './gate.js';
export { AgentsGate, createAgentsGate } from './gate.js';
export type { GovernedToolOptions, InjectedValues } from './injected-values.js';
export type { CallgateRunContext, WithCallgate } from './run-context.js';
export { callgateOf } from './run-context.js';
export { isGoverned } from './tool-hooks.js';
export type { ToolSpecExtras } from './tool-specs.js';
export { toolSpecOf } from './tool-specs.js';
