import { describe, expect, it } from 'vitest';
import * as api from './json.js';

describe('@callgate/core/json public API', () => {
  it('exports exactly the pinned names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "MAX_RECORDED_BYTES",
        "NORMALIZE_RULE",
        "NORMALIZE_RULE_2",
        "isNormalizedMarker",
        "numberHeldExactly",
        "numberNotHeldMessage",
        "recordable",
        "yamlNumberProblem",
        "yamlNumberToken",
      ]
    `);
  });
});
