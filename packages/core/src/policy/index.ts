// The policy module: load or compile a policy, then decide calls with `Policy.evaluate`.
export { compilePolicy, loadPolicy } from './policy.js';
export type {
  AnnotationHint,
  ApprovalSettings,
  Policy,
  PolicyDocument,
  PolicyInput,
  PolicyLimits,
  PolicyRuleDocument,
} from './types.js';
