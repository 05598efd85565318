// @callgate/core/json: the `callgate-normalize/1` rule (docs/ledger.md, "Normalisation") for
// clients that must apply it before sending a value. Anything exported here is public and pinned
// by json.test.ts; add names deliberately.

export { numberHeldExactly } from '../json/exact-number.js';
export type { NormalizedMarker, NormalizeReason, Recordable } from '../json/normalize.js';
export {
  isNormalizedMarker,
  MAX_RECORDED_BYTES,
  NORMALIZE_RULE,
  NORMALIZE_RULE_2,
  recordable,
} from '../json/normalize.js';
export { numberNotHeldMessage } from '../json/safe-json.js';
export { yamlNumberProblem, yamlNumberToken } from '../json/yaml-number.js';
