// @callgate/ai-sdk: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { GovernedCall, Refusal } from '@callgate/core/adapter';
export { refusalText } from '@callgate/core/adapter';
export type { ApprovalRequestPart } from './approval-parts.js';
export type { AiSdkGateOptions, AiSdkGateSettings, ApprovalMode } from './gate.js';
export { AiSdkGate, createAiSdkGate } from './gate.js';
export type { ForwardedAnswer } from './in-app-approvals.js';
export type { ToolSpecExtras } from './tool-specs.js';
export { toolSpecOf } from './tool-specs.js';
