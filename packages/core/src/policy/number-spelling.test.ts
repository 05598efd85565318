// One spelling for every whole number and duration of a policy (docs/gate.md): decimal digits,
// and for a duration digits with a unit right after them. YAML reads `0x10`, `0o10`, `+5`, `7.0`
// and `1e2` as numbers before callgate sees them; the fields are held to their source text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';
import { loadPolicy } from './policy.js';
import { readWholeNumber, wholeNumberProblem } from './whole-number.js';

/** The message loading `text` is refused with; fails the test when it loads. */
function refusal(text: string): string {
  try {
    loadPolicy(text, { source: 'policy.yaml' });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`loaded: ${text}`);
}

/** Every whole-number and duration field of a policy, as YAML (block style) around the value. */
const FIELDS = [
  {
    field: 'limits.run.max_calls',
    kind: 'whole',
    yaml: (v: string) => `limits:\n  run:\n    max_calls: ${v}\n`,
  },
  {
    field: 'limits.tools.send_invoice.max_calls',
    kind: 'whole',
    yaml: (v: string) => `limits:\n  tools:\n    send_invoice:\n      max_calls: ${v}\n`,
  },
  { field: 'approval.ttl', kind: 'duration', yaml: (v: string) => `approval:\n  ttl: ${v}\n` },
  { field: 'approval.wait', kind: 'duration', yaml: (v: string) => `approval:\n  wait: ${v}\n` },
] as const;

/** Spellings no field takes, as YAML writes them (quoted where YAML would otherwise trim). */
const REFUSED = [
  '-0',
  '-00',
  '0x10',
  '0o10',
  '7.0',
  '+5',
  '1e2',
  '010',
  '" 5s"',
  '"5s "',
  '"5 s"',
  '"\\t5s\\n"',
  '" 1m "',
  '1_000',
  '.inf',
  '9007199254740992',
];

describe('whole-number and duration fields of a policy: one spelling (table)', () => {
  it('refuses every other spelling, naming the field at its line:column and quoting the text', () => {
    for (const { field, yaml } of FIELDS)
      for (const value of REFUSED) {
        const text = `version: 1\n${yaml(value)}`;
        const message = refusal(text);
        const line = text.split('\n').findIndex((row) => row.includes(value)) + 1;
        expect(message, `${field}: ${value}`).toMatch(new RegExp(`^policy\\.yaml:${line}:\\d+: `));
        expect(message, `${field}: ${value}`).toContain(field);
        const shown = value.startsWith('"') ? JSON.stringify(JSON.parse(value)) : value;
        expect(message, `${field}: ${value}`).toContain(shown === '.inf' ? '.inf' : shown);
      }
  });

  it('takes decimal digits and digits with a unit, with their documented meaning', () => {
    const read = (text: string) => loadPolicy(`version: 1\n${text}`).document;
    expect(read('limits: { run: { max_calls: 16 } }').limits.run.max_calls).toBe(16);
    expect(read('limits: { run: { max_calls: 0 } }').limits.run.max_calls).toBe(0);
    expect(read('approval: { ttl: 1500 }').approval.ttl).toBe(1500);
    expect(read('approval: { ttl: 1.5s, wait: "5m" }').approval).toMatchObject({ ttl: 1500, wait: 300_000 });
  });
});

/** A whole number spelt other than in decimal digits, as YAML 1.2 reads it to the same value. */
const otherSpelling = fc
  .tuple(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 0, max: 5 }))
  .map(([n, form]) => {
    const spelt = [`0x${n.toString(16)}`, `0o${n.toString(8)}`, `+${n}`, `${n}.0`, `${n}e0`, `0${n}`][form];
    return { n, spelt: spelt as string };
  });

describe('the rule, for any number (generated)', () => {
  it('a whole-number field takes n written in digits and refuses n written any other way', () => {
    fc.assert(
      fc.property(otherSpelling, ({ n, spelt }) => {
        const yaml = (v: string) => `version: 1\nlimits: { run: { max_calls: ${v} } }\n`;
        expect(loadPolicy(yaml(String(n))).document.limits.run.max_calls).toBe(n);
        expect(refusal(yaml(spelt))).toContain(
          `limits.run.max_calls: a number of calls: expected a whole number`,
        );
        expect('problem' in readWholeNumber(spelt, { minimum: 0 })).toBe(true);
        expect(wholeNumberProblem(n, { minimum: 0 }, spelt)).toContain(spelt);
      }),
    );
  });

  it('a duration field takes n written in digits and refuses n written any other way', () => {
    fc.assert(
      fc.property(otherSpelling, ({ n, spelt }) => {
        fc.pre(n > 0);
        expect(parseDuration(n, String(n))).toEqual({ ms: n });
        expect(refusal(`version: 1\napproval: { ttl: ${spelt} }\n`)).toContain('approval.ttl');
      }),
    );
  });

  it('a duration with white space anywhere is refused, quoting it', () => {
    const space = fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }), // 500h is within the longest timer (about 596 h)
        fc.constantFrom('ms', 's', 'm', 'h'),
        space,
        fc.integer({ min: 0, max: 2 }),
        (n, unit, blank, where) => {
          const text = [`${blank}${n}${unit}`, `${n}${blank}${unit}`, `${n}${unit}${blank}`][where] as string;
          expect(parseDuration(`${n}${unit}`)).toHaveProperty('ms');
          expect(parseDuration(text)).toEqual({ problem: expect.stringContaining(JSON.stringify(text)) });
        },
      ),
    );
  });

  it('minus zero is refused however it arrives', () => {
    for (const text of ['-0', '-00', '-000'])
      expect(readWholeNumber(text, { minimum: 0 })).toEqual({
        problem: expect.stringContaining('zero has no sign'),
      });
    expect(wholeNumberProblem(-0, { minimum: 0 })).toContain('zero has no sign');
    expect(parseDuration(-0)).toHaveProperty('problem');
  });
});
