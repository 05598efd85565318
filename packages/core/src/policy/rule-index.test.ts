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
});
