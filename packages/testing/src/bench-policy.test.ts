import { describe, expect, it } from 'vitest';
import { BENCH_TOOL_NAMES, makeBenchInputs, makeBenchPolicy } from './bench-policy.js';

describe('the bench policy', () => {
  it('has the rules asked for over 100 tools, and every effect shows up', () => {
    const policy = makeBenchPolicy(200);
    expect(policy.document.rules).toHaveLength(200);
    expect(new Set(BENCH_TOOL_NAMES).size).toBe(100);
    const effects = new Set(makeBenchInputs(300).map((input) => policy.evaluate(input).effect));
    expect(effects).toEqual(new Set(['allow', 'ask', 'deny']));
  });
});
