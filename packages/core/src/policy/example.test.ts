// The example policy of DESIGN §4, verbatim, decides as its comments and the design say.
import { describe, expect, it } from 'vitest';
import { loadPolicy } from './policy.js';
import type { PolicyInput } from './types.js';

const DESIGN_EXAMPLE = `version: 1
default: deny
fail_mode: closed
approval: { ttl: 60s, wait: 5m, allow_edits: false }
limits: { run: { max_calls: 100 }, tools: { send_invoice: { max_calls: 3 } } }
scrub: [force, override_safety]
trust: { untrusted: [web_fetch, read_email] }
profiles: { observe: [get_contract, query_data], execute: [get_contract, query_data, execute_decision] }
rules:
  - id: reads
    match: { tools: ["read_*", "list_*"] }
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000            # CEL: args, call, run, tool, provenance
    effect: ask
    reason: invoices over 1000 need a person
  - id: no-untrusted-side-effects
    match: { annotations: { destructiveHint: true } }
    when: provenance.untrusted
    effect: deny
`;

function call(
  tool: string,
  args: Record<string, unknown>,
  untrusted = false,
  destructive?: boolean,
): PolicyInput {
  return {
    tool: {
      name: tool,
      annotations: destructive === undefined ? undefined : { destructiveHint: destructive },
    },
    args,
    call: { id: 'call-1', attempt: 1, minted: false },
    run: { id: 'run-1', principal: 'agent', framework: 'test', labels: {} },
    provenance: { untrusted, sources: untrusted ? ['web_fetch'] : [] },
  };
}

describe('the DESIGN §4 example policy', () => {
  const policy = loadPolicy(DESIGN_EXAMPLE, { source: 'design-example.yaml' });

  it('loads its settings', () => {
    expect(policy.defaultEffect).toBe('deny');
    expect(policy.failMode).toBe('closed');
    expect(policy.approval).toEqual({ ttlMs: 60_000, waitMs: 300_000, allowEdits: false });
    expect(policy.limits).toEqual({ run: { maxCalls: 100 }, tools: { send_invoice: { maxCalls: 3 } } });
    expect(policy.scrub).toEqual(['force', 'override_safety']);
    expect(policy.isUntrusted('web_fetch')).toBe(true);
    expect(policy.isUntrusted('read_email')).toBe(true);
    expect(policy.inProfile('observe', 'query_data')).toBe(true);
    expect(policy.inProfile('observe', 'execute_decision')).toBe(false);
    expect(policy.inProfile('execute', 'execute_decision')).toBe(true);
    expect(policy.document.rules[1]?.when).toBe('args.amount > 1000');
  });

  it('allows reads and lists', () => {
    const decision = policy.evaluate(call('read_file', { path: 'a.txt' }, false, false));
    expect(decision).toEqual({
      effect: 'allow',
      rules: ['reads'],
      reason: 'matched rule "reads" (allow)',
      policy_digest: policy.digest,
    });
    expect(policy.evaluate(call('list_invoices', {}, false, false)).effect).toBe('allow');
  });

  it('asks a person for invoices over 1000, with the rule reason', () => {
    for (const amount of [1500, 1000.5]) {
      const decision = policy.evaluate(call('send_invoice', { amount }, false, false));
      expect(decision).toMatchObject({
        effect: 'ask',
        rules: ['large-invoices'],
        reason: 'invoices over 1000 need a person',
      });
    }
  });

  it('denies smaller invoices by default: no rule allows them', () => {
    const decision = policy.evaluate(call('send_invoice', { amount: 1000 }, false, false));
    expect(decision.effect).toBe('deny');
    expect(decision.rules).toEqual([]);
  });

  it('denies destructive calls with untrusted arguments, over the ask', () => {
    const decision = policy.evaluate(call('send_invoice', { amount: 5000 }, true, true));
    expect(decision.effect).toBe('deny');
    expect(decision.rules).toEqual(['no-untrusted-side-effects']);
  });

  it('treats a tool without annotations as destructive (the MCP default)', () => {
    expect(policy.evaluate(call('read_file', {}, true)).rules).toEqual(['no-untrusted-side-effects']);
    expect(policy.evaluate(call('read_file', {}, true, false)).rules).toEqual(['reads']);
  });

  it('asks when the amount is missing (a condition error fails closed)', () => {
    const decision = policy.evaluate(call('send_invoice', {}, false, false));
    expect(decision.effect).toBe('ask');
    expect(decision.reason).toContain('No such key: amount');
  });
});
