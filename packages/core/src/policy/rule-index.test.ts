import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileToolPatterns } from './glob.js';
import { type IndexedRule, RuleIndex } from './rule-index.js';

function rule(id: string, tools?: string[]): IndexedRule & { id: string } {
  return {
    id,
    toolNames: tools?.filter((tool) => !tool.includes('*')),
    wildcard: tools === undefined || tools.some((tool) => tool.includes('*')),
    matchesTool: tools === undefined ? () => true : compileToolPatterns(tools),
  };
}

describe('RuleIndex', () => {
  const index = new RuleIndex([
    rule('a', ['send_email']),
    rule('all'),
    rule('sends', ['send_*']),
    rule('b', ['send_email', 'read_file']),
  ]);
  const ids = (tool: string) => index.candidates(tool).map((candidate) => candidate.id);

  it('gives a named tool its rules and the matching wildcard rules in file order', () => {
    expect(ids('send_email')).toEqual(['a', 'all', 'sends', 'b']);
    expect(ids('read_file')).toEqual(['all', 'b']);
  });

  it('gives any other tool the wildcard rules that match it', () => {
    expect(ids('send_sms')).toEqual(['all', 'sends']);
    expect(ids('unknown')).toEqual(['all']);
  });

  it('keeps answering correctly past the cache size', () => {
    for (let count = 0; count < 3000; count++) expect(index.candidates(`send_${count}`)).toHaveLength(2);
    expect(ids('send_sms')).toEqual(['all', 'sends']);
  });

  it('gives every tool exactly the rules whose tool match holds for it, in file order (generated)', () => {
    // A small alphabet so that names, globs and asked-for tools often meet.
    const name = fc.stringMatching(/^[ab_]{1,4}$/);
    const glob = fc.stringMatching(/^[ab_*]{1,4}$/).filter((text) => text.includes('*'));
    const tools = fc.option(fc.array(fc.oneof(name, name, glob), { maxLength: 4 }), { nil: undefined });
    fc.assert(
      fc.property(fc.array(tools, { maxLength: 30 }), fc.array(name, { maxLength: 20 }), (lists, asked) => {
        const rules = lists.map((list, position) => rule(`r${position}`, list));
        const index = new RuleIndex(rules);
        // Asked twice: the second answer comes from what the first kept.
        for (const tool of [...asked, ...asked])
          expect(index.candidates(tool).map((found) => found.id)).toEqual(
            rules.filter((candidate) => candidate.matchesTool(tool)).map((found) => found.id),
          );
      }),
      { numRuns: 500 },
    );
  });

  it('indexes rules without matching every name against every rule', () => {
    // 4,000 rules each naming its own tool: building the index asks no rule about any name.
    let asked = 0;
    const rules = Array.from({ length: 4_000 }, (_, position) => {
      const made = rule(`r${position}`, [`tool_${position}`]);
      const matchesTool = made.matchesTool;
      return {
        ...made,
        matchesTool: (tool: string) => {
          asked += 1;
          return matchesTool(tool);
        },
      };
    });
    const index = new RuleIndex(rules);
    expect(asked).toBe(0);
    expect(index.candidates('tool_17').map((found) => found.id)).toEqual(['r17']);
  });
});
