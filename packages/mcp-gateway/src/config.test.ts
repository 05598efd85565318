import { describe, expect, it } from 'vitest';
import { parseUpstreams, trustOf } from './config.js';

describe('parseUpstreams', () => {
  it('reads stdio and http upstreams and normalizes the timeout', () => {
    const upstreams = parseUpstreams([
      {
        name: 'files',
        stdio: { command: 'npx', args: ['-y', 'server'], env: { A: '1' }, cwd: '/tmp' },
        timeout: '30s',
      },
      {
        name: 'web',
        http: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
        trust: 'untrusted',
        prefix: true,
      },
      {
        name: 'mixed',
        http: { url: 'http://127.0.0.1:3000/mcp' },
        trust: { default: 'untrusted', tools: { safe: 'trusted' } },
        timeout: 1500,
      },
    ]);
    expect(upstreams[0]).toEqual({
      name: 'files',
      stdio: { command: 'npx', args: ['-y', 'server'], env: { A: '1' }, cwd: '/tmp' },
      timeoutMs: 30_000,
    });
    expect(upstreams[1]?.prefix).toBe(true);
    expect(upstreams[2]?.timeoutMs).toBe(1500);
    expect(trustOf(upstreams[0] as never, 'anything')).toBe('trusted');
    expect(trustOf(upstreams[1] as never, 'anything')).toBe('untrusted');
    expect(trustOf(upstreams[2] as never, 'safe')).toBe('trusted');
    expect(trustOf(upstreams[2] as never, 'other')).toBe('untrusted');
    expect(parseUpstreams(undefined)).toEqual([]);
  });

  it('names the offending entry and field', () => {
    expect(() => parseUpstreams([{ name: 'a', stdio: { command: 'x' }, http: { url: 'http://x' } }])).toThrow(
      /upstreams\[0\]: set exactly one of `stdio` and `http`/,
    );
    expect(() => parseUpstreams([{ name: 'a b', stdio: { command: 'x' } }])).toThrow(/upstreams\[0\]\.name/);
    expect(() => parseUpstreams([{ name: 'a__b', stdio: { command: 'x' } }])).toThrow(
      /must not contain "__"/,
    );
    expect(() => parseUpstreams([{ name: 'a', http: { url: 'ftp://x' } }])).toThrow(
      /upstreams\[0\]\.http\.url/,
    );
    expect(() => parseUpstreams([{ name: 'a', stdio: { command: 'x' }, colour: 'red' }])).toThrow(
      'upstreams[0].colour: unknown field',
    );
    expect(() => parseUpstreams([{ name: 'a', stdio: { command: 'x' }, trust: 'bogus' }])).toThrow(
      'upstreams[0].trust: must be one of "trusted", "untrusted"',
    );
    expect(() => parseUpstreams([{ name: 'a', stdio: { command: 'x', cmd: 'y' } }])).toThrow(
      'upstreams[0].stdio.cmd: unknown field',
    );
    expect(() => parseUpstreams([{ name: 'a', stdio: { command: 'x' }, timeout: 'soon' }])).toThrow(
      /upstreams\[0\]\.timeout: expected a duration such as 500ms/,
    );
    expect(() =>
      parseUpstreams([
        { name: 'a', stdio: { command: 'x' } },
        { name: 'a', stdio: { command: 'y' } },
      ]),
    ).toThrow(/upstreams\[1\]\.name: a is used twice/);
    expect(() => parseUpstreams({ a: 1 })).toThrow(/must be a list/);
  });

  it('reads the deprecated timeoutMs and says what to write instead', () => {
    const warnings: string[] = [];
    const upstreams = parseUpstreams([{ name: 'a', stdio: { command: 'x' }, timeoutMs: 1500 }], {
      warn: (message) => warnings.push(message),
    });
    expect(upstreams[0]?.timeoutMs).toBe(1500);
    expect(warnings).toEqual([
      'upstreams[0].timeoutMs is deprecated: write timeout: 1500ms (any duration: 30s, 5m)',
    ]);
  });

  it('reads timeout with the grammar of policy durations', () => {
    const [upstream] = parseUpstreams([{ name: 'a', stdio: { command: 'x' }, timeout: '1.5s' }]);
    expect(upstream?.timeoutMs).toBe(1500);
  });

  it('holds timeout and timeoutMs to the one duration rule: exact, whole ms, within a timer', () => {
    const upstream = { name: 'a', stdio: { command: 'x' } };
    for (const [field, value, problem] of [
      ['timeout', '1.00000000000000001s', /finer than a millisecond/],
      ['timeout', 9007199254740992, /longer than the longest a timer can hold/],
      ['timeout', 1.5, /positive whole number/],
      ['timeoutMs', 3_000_000_000, /longer than the longest a timer can hold/],
      ['timeoutMs', 9007199254740992, /longer than the longest a timer can hold/],
      ['timeoutMs', 0, /positive whole number/],
    ] as const)
      expect(
        () => parseUpstreams([{ ...upstream, [field]: value }], { warn: () => {} }),
        `${field}: ${value}`,
      ).toThrow(new RegExp(`^upstreams\\[0\\]\\.${field}: .*${problem.source}`));
  });
});
