// @callgate/langchain: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { GovernedCall, Refusal } from '@callgate/core/adapter';
export { refusalText } from '@callgate/core/adapter';
export type { CallgateActionRequest, CallgateInterrupt } from './interrupt-approvals.js';
export type { CallgateMiddlewareOptions } from './middleware.js';
export { callgateMiddleware } from './middleware.js';
export type { ToolSpecExtras } from './tool-specs.js';
export { toolSpecOf } from './tool-specs.js';
