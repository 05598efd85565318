// `callgate policy test` refuses a cases file whose case checks nothing, has a name given twice
// or a key of the wrong type, naming the line: generated over where the bad case stands.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callgate } from '../test-support.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callgate-policy-cases-'));
  await writeFile(
    join(dir, 'policy.yaml'),
    'version: 1\ndefault: deny\nrules:\n  - id: reads\n    match: { tools: ["read_*"] }\n    effect: allow\n',
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('callgate policy test refuses a case that checks nothing or cannot be told apart', () => {
  // One bad case among good ones, at a generated place: refused (exit 2) with its line and key.
  const good = (index: number) =>
    `  - name: good ${index}\n    tool: read_file\n    expect: { effect: allow }\n`;
  const bad: Array<[string, string]> = [
    [
      '    tool: read_file\n    expect: {}\n',
      '.expect: expected at least one of effect, rules, scrubbed, reason',
    ],
    [
      '    name: good 0\n    tool: read_file\n    expect: { effect: allow }\n',
      '.name: "good 0" is already the name of the case at line 3',
    ],
    [
      '    name: 5\n    tool: read_file\n    expect: { effect: allow }\n',
      '.name: expected a non-empty string',
    ],
    ['    tool: read_file\n    call: [x]\n    expect: { effect: allow }\n', '.call: expected a mapping'],
    ['    tool: read_file\n    run: yes\n    expect: { effect: allow }\n', '.run: expected a mapping'],
    [
      '    tool: read_file\n    call: { attempt: 0 }\n    expect: { effect: allow }\n',
      '.call.attempt: expected a whole number',
    ],
    [
      '    tool: read_file\n    provenance: { untrusted: "no" }\n    expect: { effect: allow }\n',
      '.provenance.untrusted: expected true or false',
    ],
    [
      '    tool: read_file\n    run: { principal: [x] }\n    expect: { effect: allow }\n',
      '.run.principal: expected a string',
    ],
    [
      '    tool: read_file\n    run: { labels: { team: 5 } }\n    expect: { effect: allow }\n',
      '.run.labels: expected a mapping of strings',
    ],
  ];
  it('names the line and key of the bad case wherever it stands', async () => {
    const file = join(dir, 'generated-cases.yaml');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: bad.length - 1 }),
        async (before, which) => {
          const [text, message] = bad[which] as [string, string];
          let yaml = 'policy: policy.yaml\ncases:\n';
          for (let index = 0; index < before; index++) yaml += good(index);
          const line = yaml.split('\n').length;
          yaml += `  -${text.slice(3)}${good(before)}`;
          await writeFile(file, yaml);
          const result = await callgate(['policy', 'test', file]);
          expect(result.code).toBe(2);
          expect(result.lines.join('\n')).toContain(`${file}:${line}: cases[${before}]${message}`);
        },
      ),
      { numRuns: 30 },
    );
  });
});
