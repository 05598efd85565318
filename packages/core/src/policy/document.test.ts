import { type CallgateError, isCallgateError } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { compilePolicy, loadPolicy } from './policy.js';

function yaml(...lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

/** The error loading `text` throws; fails the test when it loads. */
function refusal(load: () => unknown): CallgateError {
  try {
    load();
  } catch (error) {
    if (isCallgateError(error)) return error;
    throw error;
  }
  throw new Error('expected the policy to be refused');
}

function loadRefusal(text: string): CallgateError {
  return refusal(() => loadPolicy(text, { source: 'policy.yaml' }));
}

describe('loadPolicy refuses a bad policy with policy-invalid, the rule id and line:column', () => {
  it('bad YAML syntax', () => {
    const error = loadRefusal(yaml('version: 1', 'rules: [', '  - id: a'));
    expect(error.kind).toBe('policy-invalid');
    expect(error.message).toMatch(/^policy\.yaml:\d+:\d+: YAML: /);
  });

  it('a duplicate YAML key', () => {
    const error = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: a', '    effect: allow', '    effect: deny'),
    );
    expect(error.kind).toBe('policy-invalid');
    expect(error.message).toContain('policy.yaml:5:5:');
    expect(error.message).toContain('unique');
  });

  it('several YAML documents', () => {
    const error = loadRefusal(yaml('version: 1', '---', 'version: 1'));
    expect(error.kind).toBe('policy-invalid');
    expect(error.message).toContain('policy.yaml:2:1:');
  });

  it('an unknown tag', () => {
    const error = loadRefusal(yaml('version: 1', 'default: !effect deny'));
    expect(error.message).toContain('policy.yaml:2:10:');
  });

  it('an unknown top-level key, with a suggestion', () => {
    const error = loadRefusal(yaml('version: 1', 'defualt: allow'));
    expect(error.kind).toBe('policy-invalid');
    expect(error.message).toBe(
      'policy.yaml:2:1: defualt: unknown key "defualt" (did you mean "default"? allowed: version, default, ' +
        'fail_mode, approval, limits, scrub, trust, profiles, rules)',
    );
    expect(error.details).toEqual({ path: 'defualt', line: 2, column: 1 });
  });

  it('an unknown key inside a rule', () => {
    const error = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: reads', '    match: { tools: [read_file] }', '    efect: allow'),
    );
    expect(error.message).toContain('policy.yaml:5:5: rule "reads": rules[0].efect: unknown key "efect"');
    expect(error.message).toContain('did you mean "effect"?');
    expect(error.details).toEqual({ path: 'rules[0].efect', rule: 'reads', line: 5, column: 5 });
  });

  it('an unknown key inside match and inside annotations', () => {
    const inMatch = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: r1', '    match: { tool: [a] }', '    effect: allow'),
    );
    expect(inMatch.message).toContain('policy.yaml:4:14: rule "r1": rules[0].match.tool: unknown key "tool"');
    const inAnnotations = loadRefusal(
      yaml(
        'version: 1',
        'rules:',
        '  - id: r2',
        '    match:',
        '      annotations: { destructive: true }',
        '    effect: deny',
      ),
    );
    expect(inAnnotations.message).toContain(
      'policy.yaml:5:22: rule "r2": rules[0].match.annotations.destructive',
    );
    expect(inAnnotations.message).toContain('did you mean "destructiveHint"?');
  });

  it('a duplicate rule id', () => {
    const error = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: reads', '    effect: allow', '  - id: reads', '    effect: deny'),
    );
    expect(error.message).toBe(
      'policy.yaml:5:9: rule "reads": rules[1].id: duplicate rule id; rules[0] at line 3 already uses it',
    );
    expect(error.details).toMatchObject({ rule: 'reads', line: 5, column: 9 });
  });

  it('a bad effect', () => {
    const error = loadRefusal(yaml('version: 1', 'rules:', '  - id: reads', '    effect: alow'));
    expect(error.message).toBe(
      'policy.yaml:4:13: rule "reads": rules[0].effect: expected one of allow, deny, ask (got "alow")',
    );
  });

  it('a bad default effect and a bad fail mode', () => {
    expect(loadRefusal(yaml('version: 1', 'default: block')).message).toContain('policy.yaml:2:10: default:');
    expect(loadRefusal(yaml('version: 1', 'fail_mode: shut')).message).toContain(
      'policy.yaml:2:12: fail_mode:',
    );
  });

  it('a bad duration', () => {
    const error = loadRefusal(yaml('version: 1', 'approval: { ttl: 60x, wait: 5m }'));
    expect(error.message).toContain('policy.yaml:2:18: approval.ttl: expected a duration');
    expect(loadRefusal(yaml('version: 1', 'approval:', '  wait: 0')).message).toContain('policy.yaml:3:9:');
  });

  it('a CEL condition that does not parse: rule id, line:column and what is wrong', () => {
    const error = loadRefusal(
      yaml(
        'version: 1',
        'rules:',
        '  - id: large-invoices',
        '    match: { tools: [send_invoice] }',
        '    when: args.amount > > 1000',
        '    effect: ask',
      ),
    );
    // The `when` value starts at column 11; the stray `>` is character 15 of the condition.
    expect(error.message).toBe(
      'policy.yaml:5:25: rule "large-invoices": rules[0].when: CEL syntax error at character 15: Unexpected token: GT',
    );
    expect(error.details).toEqual({ path: 'rules[0].when', rule: 'large-invoices', line: 5, column: 25 });
  });

  it('a CEL condition in quotes points inside the quotes', () => {
    const error = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: q', '    when: "args.x ==="', '    effect: deny'),
    );
    // The value's quote is at column 11, so character 10 of the condition is at column 21.
    expect(error.message).toBe(
      'policy.yaml:4:21: rule "q": rules[0].when: CEL syntax error at character 10: Unexpected character: =',
    );
  });

  it('a CEL condition in a block scalar points at the value', () => {
    const error = loadRefusal(
      yaml(
        'version: 1',
        'rules:',
        '  - id: block',
        '    when: >',
        '      args.x &&',
        '      )',
        '    effect: deny',
      ),
    );
    expect(error.message).toMatch(
      /^policy\.yaml:4:11: rule "block": rules\[0\]\.when: CEL syntax error at character \d+/,
    );
  });

  it('a CEL condition with a misspelt field or a wrong type', () => {
    const typo = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: t', '    when: provenance.untrustd', '    effect: deny'),
    );
    expect(typo.message).toBe(
      'policy.yaml:4:22: rule "t": rules[0].when: CEL type error at character 12: No such key: untrustd',
    );
    const unknown = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: u', '    when: arguments.x > 1', '    effect: deny'),
    );
    expect(unknown.message).toContain('policy.yaml:4:11: rule "u": rules[0].when: CEL type error');
    expect(unknown.message).toContain('Unknown variable: arguments');
    const notBool = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: n', '    when: call.attempt + 1', '    effect: deny'),
    );
    expect(notBool.message).toContain('rule "n": rules[0].when: the condition gives int, not a bool');
  });

  it('an unsupported or missing version', () => {
    const two = loadRefusal(yaml('version: 2', 'rules: []'));
    expect(two.message).toBe(
      'policy.yaml:1:10: version: unsupported policy version 2; this callgate reads version 1',
    );
    const missing = loadRefusal(yaml('rules: []'));
    expect(missing.message).toContain('policy.yaml:1:1: the policy has no `version`');
  });

  it('not a mapping at all', () => {
    expect(loadRefusal('').message).toContain('policy.yaml:1:1: a policy is a mapping');
    expect(loadRefusal('- version: 1').message).toContain('policy.yaml:1:1: a policy is a mapping');
  });

  it('a rule without id or effect', () => {
    const noId = loadRefusal(yaml('version: 1', 'rules:', '  - effect: allow'));
    expect(noId.message).toBe('policy.yaml:3:5: rules[0]: a rule needs an `id`');
    const noEffect = loadRefusal(yaml('version: 1', 'rules:', '  - id: r', '    match: { tools: [a] }'));
    expect(noEffect.message).toBe(
      'policy.yaml:3:5: rule "r": rules[0]: a rule needs an `effect` (allow, deny or ask)',
    );
  });

  it('bad tool patterns, empty tool lists and non-boolean hints', () => {
    const space = loadRefusal(
      yaml(
        'version: 1',
        'rules:',
        '  - id: r',
        '    match: { tools: [ok, "read file"] }',
        '    effect: allow',
      ),
    );
    expect(space.message).toContain(
      'policy.yaml:4:26: rule "r": rules[0].match.tools[1]: a tool name or glob',
    );
    const empty = loadRefusal(
      yaml('version: 1', 'rules:', '  - id: r', '    match: { tools: [] }', '    effect: allow'),
    );
    expect(empty.message).toContain('rule "r": rules[0].match.tools: an empty list matches no tool');
    const hint = loadRefusal(
      yaml(
        'version: 1',
        'rules:',
        '  - id: r',
        '    match: { annotations: { readOnlyHint: "yes" } }',
        '    effect: allow',
      ),
    );
    expect(hint.message).toContain('policy.yaml:4:43: rule "r": rules[0].match.annotations.readOnlyHint:');
  });

  it('bad limits, profiles, scrub and trust', () => {
    expect(loadRefusal(yaml('version: 1', 'limits: { run: { max_calls: -1 } }')).message).toContain(
      'policy.yaml:2:29: limits.run.max_calls:',
    );
    expect(
      loadRefusal(yaml('version: 1', 'limits:', '  tools:', '    "send_*": { max_calls: 1 }')).message,
    ).toContain('policy.yaml:4:5: limits.tools["send_*"]: a limit names one tool');
    expect(loadRefusal(yaml('version: 1', 'profiles: { "my profile": [a] }')).message).toContain(
      'policy.yaml:2:13: profiles["my profile"]: a profile name',
    );
    expect(loadRefusal(yaml('version: 1', 'scrub: force')).message).toContain(
      'policy.yaml:2:8: scrub: expected a list',
    );
    expect(loadRefusal(yaml('version: 1', 'trust: { untrusted: [web_fetch, 3] }')).message).toContain(
      'policy.yaml:2:33: trust.untrusted[1]: expected a string (got 3)',
    );
  });
});

describe('compilePolicy refuses a bad document with the path and rule id', () => {
  it('names the source, rule and path without a position', () => {
    const error = refusal(() =>
      compilePolicy(
        { version: 1, rules: [{ id: 'r', effect: 'allow', when: 'args.x >' }] },
        { source: 'inline' },
      ),
    );
    expect(error.kind).toBe('policy-invalid');
    expect(error.message).toBe(
      'inline: rule "r": rules[0].when: CEL syntax error at character 9: Unexpected token: EOF',
    );
    expect(error.details).toEqual({ path: 'rules[0].when', rule: 'r' });
  });

  it('refuses objects that are not plain data', () => {
    const error = refusal(() => compilePolicy({ version: 1, rules: [new Map()] }));
    expect(error.message).toBe('policy: rules[0]: expected a rule mapping with id and effect (got Map)');
  });
});

describe('normalized document and digest', () => {
  const blockStyle = yaml(
    'version: 1',
    'default: deny',
    'approval:',
    '  ttl: 60s',
    '  wait: 5m',
    'scrub: [force]',
    'rules:',
    '  - id: reads',
    '    match:',
    '      tools: ["read_*"]',
    '    effect: allow',
    '  - id: big',
    '    effect: ask',
    '    when: args.amount > 1000',
    '    match: { tools: [send_invoice] }',
    '    reason: big invoices need a person',
  );
  const reordered = yaml(
    'rules:',
    '  - effect: allow',
    '    match: { tools: ["read_*"] }',
    '    id: reads',
    '  - reason: big invoices need a person',
    '    match: { tools: [send_invoice] }',
    '    when: args.amount > 1000',
    '    id: big',
    '    effect: ask',
    'scrub: [force, force]',
    'approval: { wait: 300000, ttl: 60000, allow_edits: false }',
    'fail_mode: closed',
    'version: 1',
  );

  it('is the same for the same policy in another key order, style and spelling of defaults', () => {
    const first = loadPolicy(blockStyle);
    const second = loadPolicy(reordered);
    expect(second.digest).toBe(first.digest);
    expect(second.document).toEqual(first.document);
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('changes when a rule changes', () => {
    const changed = loadPolicy(blockStyle.replace('1000', '1001'));
    expect(changed.digest).not.toBe(loadPolicy(blockStyle).digest);
  });

  it('fills in every default and compiles back to the same digest', () => {
    const policy = loadPolicy('version: 1');
    expect(policy.document).toEqual({
      version: 1,
      default: 'deny',
      fail_mode: 'closed',
      approval: { ttl: 60_000, wait: 300_000, allow_edits: false },
      limits: { run: {}, tools: {} },
      scrub: [],
      trust: { untrusted: [] },
      profiles: {},
      rules: [],
    });
    expect(policy.defaultEffect).toBe('deny');
    expect(policy.failMode).toBe('closed');
    expect(policy.approval).toEqual({ ttlMs: 60_000, waitMs: 300_000, allowEdits: false });
    expect(compilePolicy(policy.document).digest).toBe(policy.digest);
  });

  it('reads durations, limits, scrub and trust', () => {
    const policy = loadPolicy(
      yaml(
        'version: 1',
        'default: allow',
        'fail_mode: open',
        'approval: { ttl: 500ms, wait: 1h, allow_edits: true }',
        'limits: { run: { max_calls: 100 }, tools: { send_invoice: { max_calls: 3 }, read_file: {} } }',
        'scrub: [force, override_safety]',
        'trust: { untrusted: [web_fetch, "mail_*"] }',
      ),
    );
    expect(policy.defaultEffect).toBe('allow');
    expect(policy.failMode).toBe('open');
    expect(policy.approval).toEqual({ ttlMs: 500, waitMs: 3_600_000, allowEdits: true });
    expect(policy.limits).toEqual({
      run: { maxCalls: 100 },
      tools: { send_invoice: { maxCalls: 3 }, read_file: {} },
    });
    expect(policy.scrub).toEqual(['force', 'override_safety']);
    expect(policy.untrustedTools).toEqual(['web_fetch', 'mail_*']);
  });

  it('is deeply frozen', () => {
    const policy = loadPolicy(blockStyle);
    expect(Object.isFrozen(policy.document)).toBe(true);
    expect(Object.isFrozen(policy.document.rules[0]?.match?.tools)).toBe(true);
  });

  it('drops an empty match', () => {
    const policy = compilePolicy({ version: 1, rules: [{ id: 'all', match: {}, effect: 'ask' }] });
    expect(policy.document.rules[0]).toEqual({ id: 'all', effect: 'ask' });
  });

  it('keeps a tool named __proto__ as plain data', () => {
    const policy = loadPolicy(yaml('version: 1', 'limits:', '  tools:', '    __proto__: { max_calls: 1 }'));
    expect(Object.keys(policy.document.limits.tools)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(policy.document.limits.tools)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(policy.limits.tools, '__proto__')?.value).toEqual({ maxCalls: 1 });
  });
});
