import type { ToolAnnotations } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { compilePolicy, loadPolicy } from './policy.js';
import type { PolicyInput } from './types.js';

interface CallOptions {
  annotations?: ToolAnnotations;
  trust?: 'trusted' | 'untrusted';
  attempt?: number;
  minted?: boolean;
  principal?: string;
  labels?: Record<string, string>;
  untrusted?: boolean;
  sources?: string[];
}

function input(tool: string, args: Record<string, unknown> = {}, options: CallOptions = {}): PolicyInput {
  return {
    tool: { name: tool, annotations: options.annotations, trust: options.trust },
    args,
    call: { id: 'call-1', attempt: options.attempt ?? 1, minted: options.minted ?? false },
    run: {
      id: 'run-1',
      principal: options.principal ?? 'alice',
      framework: 'test',
      labels: options.labels ?? {},
    },
    provenance: { untrusted: options.untrusted ?? false, sources: options.sources ?? [] },
  };
}

function policyOf(rules: Record<string, unknown>[], settings: Record<string, unknown> = {}) {
  return compilePolicy({ version: 1, ...settings, rules });
}

describe('the fold', () => {
  const policy = policyOf([
    { id: 'allow-a', match: { tools: ['tool_a'] }, effect: 'allow' },
    { id: 'ask-a', match: { tools: ['tool_a', 'tool_b'] }, effect: 'ask', reason: 'a person looks first' },
    { id: 'deny-a', match: { tools: ['tool_a'] }, effect: 'deny' },
    { id: 'allow-b', match: { tools: ['tool_b'] }, effect: 'allow' },
    { id: 'allow-c', match: { tools: ['tool_c'] }, effect: 'allow', reason: 'c is harmless' },
    { id: 'allow-c-again', match: { tools: ['tool_*'] }, effect: 'allow' },
  ]);

  it('deny wins over ask and allow', () => {
    expect(policy.evaluate(input('tool_a'))).toEqual({
      effect: 'deny',
      rules: ['deny-a'],
      reason: 'matched rule "deny-a" (deny)',
      policy_digest: policy.digest,
    });
  });

  it('ask wins over allow', () => {
    const decision = policy.evaluate(input('tool_b'));
    expect(decision.effect).toBe('ask');
    expect(decision.rules).toEqual(['ask-a']);
    expect(decision.reason).toBe('a person looks first');
  });

  it('lists every rule of the winning effect in file order, with their reasons', () => {
    const decision = policy.evaluate(input('tool_c'));
    expect(decision.effect).toBe('allow');
    expect(decision.rules).toEqual(['allow-c', 'allow-c-again']);
    expect(decision.reason).toBe('c is harmless; matched rule "allow-c-again" (allow)');
  });

  it('applies the default deny when nothing matches', () => {
    expect(policy.evaluate(input('other'))).toEqual({
      effect: 'deny',
      rules: [],
      reason: 'no rule matched; the policy default (deny) applies',
      policy_digest: policy.digest,
    });
  });

  it('applies a default allow or ask when the policy says so', () => {
    expect(policyOf([], { default: 'allow' }).evaluate(input('x')).effect).toBe('allow');
    const ask = policyOf([], { default: 'ask' }).evaluate(input('x'));
    expect(ask.effect).toBe('ask');
    expect(ask.reason).toBe('no rule matched; the policy default (ask) applies');
  });

  it('matches every tool with a rule that has no match', () => {
    const everything = policyOf([{ id: 'everything', effect: 'ask' }]);
    expect(everything.evaluate(input('anything_at/all')).rules).toEqual(['everything']);
  });
});

describe('tool globs', () => {
  const policy = policyOf([
    { id: 'reads', match: { tools: ['read_*', 'list_*'] }, effect: 'allow' },
    { id: 'invoices', match: { tools: ['*_invoice'] }, effect: 'ask' },
    { id: 'middle', match: { tools: ['db.*.drop'] }, effect: 'deny' },
    { id: 'exact-and-glob', match: { tools: ['send_email', 'send_*'] }, effect: 'ask' },
  ]);

  it('match by prefix, suffix and middle, literally otherwise', () => {
    expect(policy.evaluate(input('read_file')).rules).toEqual(['reads']);
    expect(policy.evaluate(input('list_')).rules).toEqual(['reads']);
    expect(policy.evaluate(input('read_invoice')).rules).toEqual(['invoices']);
    expect(policy.evaluate(input('db.users.drop')).rules).toEqual(['middle']);
    expect(policy.evaluate(input('dbXusers.drop')).rules).toEqual([]);
    expect(policy.evaluate(input('reader')).rules).toEqual([]);
  });

  it('count a rule once when both a name and a glob of it match', () => {
    expect(policy.evaluate(input('send_email')).rules).toEqual(['exact-and-glob']);
    expect(policy.evaluate(input('send_invoice')).rules).toEqual(['invoices', 'exact-and-glob']);
  });

  it('give the same answer for a name seen many times (the cache) as the first time', () => {
    const first = policy.evaluate(input('list_users'));
    for (let index = 0; index < 3; index++) expect(policy.evaluate(input('list_users'))).toEqual(first);
  });
});

describe('annotation matches', () => {
  const policy = policyOf([
    { id: 'read-only', match: { annotations: { readOnlyHint: true } }, effect: 'allow' },
    { id: 'destructive', match: { annotations: { destructiveHint: true } }, effect: 'ask' },
    {
      id: 'closed-world-writes',
      match: { tools: ['write_*'], annotations: { readOnlyHint: false, openWorldHint: false } },
      effect: 'allow',
    },
  ]);

  it('match the hints a tool declares', () => {
    expect(policy.evaluate(input('lookup', {}, { annotations: { readOnlyHint: true } })).rules).toEqual([
      'read-only',
    ]);
    const write = input('write_note', {}, { annotations: { destructiveHint: false, openWorldHint: false } });
    expect(policy.evaluate(write).rules).toEqual(['closed-world-writes']);
  });

  it('take the MCP defaults for hints a tool leaves out', () => {
    // No annotations: not read-only, destructive, open world.
    expect(policy.evaluate(input('mystery')).rules).toEqual(['destructive']);
    // Read-only tools are not destructive unless they say so.
    expect(policy.evaluate(input('peek', {}, { annotations: { readOnlyHint: true } })).effect).toBe('allow');
    expect(policy.evaluate(input('write_x', {}, { annotations: { openWorldHint: false } })).rules).toEqual([
      'destructive',
    ]);
  });
});

describe('CEL conditions', () => {
  const policy = policyOf([
    { id: 'big', match: { tools: ['pay'] }, when: 'args.amount > 1000', effect: 'ask' },
    {
      id: 'count',
      match: { tools: ['pay'] },
      when: 'has(args.count) && args.count + 1 > 3 && args.count % 2 == 0',
      effect: 'deny',
    },
    {
      id: 'prod',
      match: { tools: ['deploy'] },
      when: '"env" in run.labels && run.labels.env == "prod"',
      effect: 'ask',
    },
    { id: 'who', match: { tools: ['deploy'] }, when: 'run.principal == "mallory"', effect: 'deny' },
    { id: 'retries', match: { tools: ['deploy'] }, when: 'call.attempt > 2 || call.minted', effect: 'deny' },
    { id: 'tainted', match: { tools: ['mail'] }, when: 'provenance.untrusted', effect: 'deny' },
    { id: 'from-web', match: { tools: ['mail'] }, when: '"web_fetch" in provenance.sources', effect: 'deny' },
    {
      id: 'destructive',
      match: { tools: ['drop'] },
      when: 'tool.annotations.destructiveHint && tool.name == "drop"',
      effect: 'deny',
    },
    { id: 'has-cc', match: { tools: ['mail'] }, when: 'has(args.cc)', effect: 'ask' },
    { id: 'untrusted-tool', match: { tools: ['web_*'] }, when: 'tool.trust == "untrusted"', effect: 'ask' },
  ]);

  it('compare whole and fractional amounts as a person expects', () => {
    expect(policy.evaluate(input('pay', { amount: 1500 })).rules).toEqual(['big']);
    expect(policy.evaluate(input('pay', { amount: 1000.5 })).rules).toEqual(['big']);
    expect(policy.evaluate(input('pay', { amount: 1000 })).effect).toBe('deny');
    expect(policy.evaluate(input('pay', { amount: 1000 })).rules).toEqual([]);
    expect(policy.evaluate(input('pay', { amount: 999.99 })).rules).toEqual([]);
  });

  it('do integer arithmetic on whole numbers', () => {
    expect(policy.evaluate(input('pay', { amount: 1, count: 4 })).rules).toEqual(['count']);
    expect(policy.evaluate(input('pay', { amount: 1, count: 5 })).rules).toEqual([]);
  });

  it('read run labels, principal and call fields', () => {
    expect(policy.evaluate(input('deploy', {}, { labels: { env: 'prod' } })).rules).toEqual(['prod']);
    expect(policy.evaluate(input('deploy', {}, { labels: { env: 'dev' } })).rules).toEqual([]);
    expect(policy.evaluate(input('deploy', {}, { labels: {} })).rules).toEqual([]);
    expect(policy.evaluate(input('deploy', {}, { principal: 'mallory' })).rules).toEqual(['who']);
    expect(policy.evaluate(input('deploy', {}, { attempt: 3 })).rules).toEqual(['retries']);
    expect(policy.evaluate(input('deploy', {}, { minted: true })).rules).toEqual(['retries']);
  });

  it('read provenance, tool annotations, trust and has()', () => {
    expect(policy.evaluate(input('mail', {}, { untrusted: true, sources: ['web_fetch'] })).rules).toEqual([
      'tainted',
      'from-web',
    ]);
    expect(policy.evaluate(input('mail', { cc: 'x@example.com' })).rules).toEqual(['has-cc']);
    expect(policy.evaluate(input('mail', { to: 'x@example.com' })).rules).toEqual([]);
    expect(policy.evaluate(input('drop', {}, { annotations: { destructiveHint: true } })).rules).toEqual([
      'destructive',
    ]);
    expect(policy.evaluate(input('drop', {}, { annotations: { destructiveHint: false } })).rules).toEqual([]);
    expect(policy.evaluate(input('web_fetch', {}, { trust: 'untrusted' })).rules).toEqual(['untrusted-tool']);
    expect(policy.evaluate(input('web_fetch')).rules).toEqual([]);
  });

  it('see a tool listed in trust.untrusted as untrusted', () => {
    const listed = policyOf(
      [
        {
          id: 'untrusted-tool',
          match: { tools: ['web_*'] },
          when: 'tool.trust == "untrusted"',
          effect: 'ask',
        },
      ],
      { trust: { untrusted: ['web_fetch'] } },
    );
    expect(listed.evaluate(input('web_fetch')).rules).toEqual(['untrusted-tool']);
    expect(listed.evaluate(input('web_search')).rules).toEqual([]);
  });
});

describe('a condition that cannot be evaluated', () => {
  const policy = policyOf([
    {
      id: 'ask-big',
      match: { tools: ['pay'] },
      when: 'args.amount > 1000',
      effect: 'ask',
      reason: 'big payment',
    },
    { id: 'allow-small', match: { tools: ['pay', 'refund'] }, when: 'args.amount < 10', effect: 'allow' },
    { id: 'deny-foreign', match: { tools: ['transfer'] }, when: 'args.currency != "EUR"', effect: 'deny' },
    { id: 'deny-not-bool', match: { tools: ['odd'] }, when: 'args.flag', effect: 'deny' },
  ]);

  it('counts as a match for ask and deny rules (fail closed), and the reason says so', () => {
    const ask = policy.evaluate(input('pay', {}));
    expect(ask.effect).toBe('ask');
    expect(ask.rules).toEqual(['ask-big']);
    expect(ask.reason).toBe(
      'big payment [rule "ask-big": its condition could not be evaluated (No such key: amount); ' +
        'an ask rule then counts as a match, failing closed]',
    );
    const deny = policy.evaluate(input('transfer', {}));
    expect(deny.effect).toBe('deny');
    expect(deny.reason).toContain('No such key: currency');
  });

  it('counts a non-boolean result as an error', () => {
    const decision = policy.evaluate(input('odd', { flag: 'yes' }));
    expect(decision.effect).toBe('deny');
    expect(decision.reason).toContain('the condition gave a string, not a bool');
    expect(policy.evaluate(input('odd', { flag: false })).rules).toEqual([]);
  });

  it('counts as no match for allow rules, and the reason says so', () => {
    const decision = policy.evaluate(input('refund', { amount: 'ten' }));
    expect(decision.effect).toBe('deny');
    expect(decision.rules).toEqual([]);
    expect(decision.reason).toBe(
      'no rule matched; the policy default (deny) applies; rule "allow-small" (allow) not applied: ' +
        'its condition failed (no such overload: dyn<string> < int)',
    );
  });
});

describe('profiles and trust', () => {
  const policy = loadPolicy(
    [
      'version: 1',
      'trust: { untrusted: [web_fetch, "mail_*"] }',
      'profiles: { observe: [get_contract, "query_*"], execute: [get_contract, execute_decision] }',
    ].join('\n'),
  );

  it('inProfile follows names and globs; unknown profiles hold nothing', () => {
    expect(policy.profiles).toEqual({
      observe: ['get_contract', 'query_*'],
      execute: ['get_contract', 'execute_decision'],
    });
    expect(policy.inProfile('observe', 'get_contract')).toBe(true);
    expect(policy.inProfile('observe', 'query_data')).toBe(true);
    expect(policy.inProfile('observe', 'execute_decision')).toBe(false);
    expect(policy.inProfile('execute', 'execute_decision')).toBe(true);
    expect(policy.inProfile('nope', 'get_contract')).toBe(false);
    expect(policy.inProfile('toString', 'get_contract')).toBe(false);
  });

  it('the built-in full profile holds every tool unless the policy defines full', () => {
    expect(policy.inProfile('full', 'anything')).toBe(true);
    const own = compilePolicy({ version: 1, profiles: { full: ['a'] } });
    expect(own.inProfile('full', 'a')).toBe(true);
    expect(own.inProfile('full', 'b')).toBe(false);
  });

  it('isUntrusted follows trust.untrusted', () => {
    expect(policy.untrustedTools).toEqual(['web_fetch', 'mail_*']);
    expect(policy.isUntrusted('web_fetch')).toBe(true);
    expect(policy.isUntrusted('mail_inbox')).toBe(true);
    expect(policy.isUntrusted('web_search')).toBe(false);
  });
});

describe('policy numbers are read as written', () => {
  const withLimit = (value: string) =>
    `version: 1\ndefault: deny\nlimits: { run: { max_calls: ${value} } }\nrules:\n  - id: reads\n    match: { tools: [read_file] }\n    effect: allow\n`;
  const withWhen = (when: string) =>
    `version: 1\ndefault: deny\nrules:\n  - id: small\n    match: { tools: [send_invoice] }\n    when: ${JSON.stringify(when)}\n    effect: allow\n`;
  const refusal = (text: string) => {
    try {
      loadPolicy(text, { source: 'p.yaml' });
    } catch (error) {
      return error as { kind: string; message: string };
    }
    throw new Error('loaded');
  };

  it('refuses a number a double does not hold, naming the field and quoting the digits', () => {
    const big = refusal(withLimit('12345678901234567890'));
    expect(big.kind).toBe('policy-invalid');
    expect(big.message).toContain('limits.run.max_calls');
    expect(big.message).toContain('12345678901234567890 is beyond ±(2^53−1)');
    expect(big.message).not.toContain('(got 12345678901234567000)');
    expect(refusal(withLimit('1e400')).message).toContain(
      'the number 1e400 has digits a double does not hold',
    );
    expect(refusal(withLimit('.inf')).message).toContain('.inf is not finite');
  });

  it('refuses a CEL number literal a double does not hold, naming the rule and quoting it', () => {
    for (const literal of ['1e-400', '1000.00000000000001', '2.0000000000000001']) {
      const problem = refusal(withWhen(`args.amount > ${literal}`));
      expect(problem.kind).toBe('policy-invalid');
      expect(problem.message).toContain('rule "small"');
      expect(problem.message).toContain(`the number ${literal} has digits a double does not hold`);
    }
    // Out of a double's range: the CEL parser refuses it itself, and the message quotes it.
    expect(refusal(withWhen('args.amount > 1e400')).message).toContain(
      'rule "small": rules[0].when: CEL number error at character 15: the number 1e400 is out of a double\'s range',
    );
    expect(refusal(withWhen('args.amount > 12345678901234567890')).message).toContain(
      'the integer 12345678901234567890 is beyond the 64-bit range of a CEL int',
    );
  });

  it('keeps number literals a double holds', () => {
    for (const literal of ['1000', '1000.5', '1e3', '0.1', '0x10', '1.50'])
      expect(
        () => loadPolicy(withWhen(`args.amount > ${literal}`), { source: 'p.yaml' }),
        literal,
      ).not.toThrow();
  });
});
