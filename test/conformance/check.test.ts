// The checker itself: what the model read is classified the same way for every adapter.
import { describe, expect, it } from 'vitest';
import { classify } from './check.js';
import { ADAPTERS, expectedCalls, SCENARIOS } from './scenarios.js';

describe('conformance checker', () => {
  it('reads a refusal as its kind, as an object or as JSON text', () => {
    const body = { error: { kind: 'policy-denied', message: 'no' } };
    expect(classify(body)).toBe('policy-denied');
    expect(classify(JSON.stringify(body))).toBe('policy-denied');
  });

  it('reads anything else as a result, or as the framework’s own error when told so', () => {
    expect(classify('contents of notes.txt')).toBe('result');
    expect(classify({ sent: true })).toBe('result');
    expect(classify('Tool execution was not approved.', true)).toBe('framework-error');
    expect(classify({ error: { kind: 'not-a-kind' } })).toBe('result');
  });

  it('has unique scenario ids and one expectation per scripted call for every adapter', () => {
    const ids = SCENARIOS.map((scenario) => scenario.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const scenario of SCENARIOS) {
      const calls = [...scenario.turns, ...(scenario.subagent ?? [])].flatMap((turn) =>
        'calls' in turn ? turn.calls : [],
      );
      for (const adapter of ADAPTERS) expect(expectedCalls(scenario, adapter)).toHaveLength(calls.length);
    }
  });
});
