// The policy module: load or compile a policy, then decide calls with `Policy.evaluate`.

export { parseDuration } from './duration.js';
export { compilePolicy, loadPolicy } from './policy.js';
export type { ReplayChange, ReplayedCall, ReplayOptions, ReplayReport, ReplayTool } from './replay.js';
export { replayPolicy } from './replay.js';
export type {
  AnnotationHint,
  ApprovalSettings,
  Policy,
  PolicyDocument,
  PolicyInput,
  PolicyLimits,
  PolicyRuleDocument,
} from './types.js';
