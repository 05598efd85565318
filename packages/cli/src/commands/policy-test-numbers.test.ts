// `callgate policy test` gives a case the verdict the gate gives the same call: a case's numbers
// reach the gate's own argument check with their digits as written (never rounded by the YAML
// reader first), so a number a double does not hold is refused as the gate refuses it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_POLICY, testEngine } from '@callgate/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPolicyTest } from './policy-test.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callgate-policy-numbers-'));
  await writeFile(join(dir, 'policy.yaml'), TEST_POLICY);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A number as a case file and a JSON client write it, or (YAML only) the double it stands for. */
type Written = { text: string; json: string } | { text: string; double: number };

const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((list) => list.join(''));

/** Numbers of every form: doubles as written, long decimals, big integers, out of range, infinities. */
const written: fc.Arbitrary<Written> = fc.oneof(
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .map((value) => ({ text: String(value), json: String(value) })),
  fc.integer({ min: -2000, max: 2000 }).map((value) => ({ text: String(value), json: String(value) })),
  fc
    .tuple(fc.integer({ min: 0, max: 5000 }), digits(14, 24), fc.integer({ min: 1, max: 9 }))
    .map(([whole, fraction, last]) => `${whole}.${fraction}${last}`)
    .map((text) => ({ text, json: text })),
  fc
    .bigInt({ min: 2n ** 53n - 3n, max: 10n ** 25n })
    .map((value) => ({ text: String(value), json: String(value) })),
  fc
    .constantFrom('1e-400', '1e400', '-1e400', '1000.00000000000001', '1e2', '1000.0', '999.99')
    .map((text) => ({
      text,
      json: text,
    })),
  fc.constantFrom<Written>(
    { text: '.inf', double: Number.POSITIVE_INFINITY },
    { text: '-.inf', double: Number.NEGATIVE_INFINITY },
    { text: '.nan', double: Number.NaN },
  ),
);

/** What the gate does with send_invoice of `amount`: the effect, and the refusal's kind if any. */
async function gateVerdict(amount: Written): Promise<{ effect: string; refused?: string }> {
  const { engine } = await gate;
  const run = await engine.startRun({ principal: 'tester', framework: 'vitest' });
  // A JSON client sends the digits as written (the text the gate parses); no JSON text has an
  // infinity, so that one is given as the double an in-process caller would hand over.
  const args =
    'json' in amount
      ? `{"to":"a@example.com","amount":${amount.json}}`
      : { to: 'a@example.com', amount: amount.double };
  const [verdict] = await engine.decide(run.run_id, [{ id: 'c1', tool: 'send_invoice', arguments: args }]);
  if (verdict?.status === 'allowed') return { effect: 'allow' };
  if (verdict?.status === 'pending') return { effect: 'ask' };
  const kind = verdict?.error?.kind ?? 'none';
  return kind === 'policy-denied' ? { effect: 'deny' } : { effect: 'deny', refused: kind };
}
const gate = testEngine();

describe('callgate policy test reads a case as the gate reads the call', () => {
  it('gives every generated case the verdict the gate gives the same call', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(written, { minLength: 1, maxLength: 8 }), async (amounts) => {
        const cases = amounts
          .map(
            (amount, index) =>
              `  - name: case ${index}\n    tool: send_invoice\n    arguments: { to: a@example.com, amount: ${amount.text} }\n    expect: { effect: allow }\n`,
          )
          .join('');
        const file = join(dir, 'cases.yaml');
        await writeFile(file, `policy: policy.yaml\ncases:\n${cases}`);
        const lines: string[] = [];
        const code = await runPolicyTest(file, {
          json: true,
          print: (line) => lines.push(line),
          warn: (line) => lines.push(line),
        });
        expect(code).not.toBe(2);
        const report = JSON.parse(lines.join('\n')) as {
          cases: Array<{ effect: string; refused?: { kind: string } }>;
        };
        for (const [index, amount] of amounts.entries()) {
          const result = report.cases[index];
          const tested = { effect: result?.effect, refused: result?.refused?.kind };
          const expected = await gateVerdict(amount);
          expect(tested, `amount ${amount.text}`).toEqual({
            effect: expected.effect,
            refused: expected.refused,
          });
        }
      }),
      { numRuns: 40 },
    );
  });

  it('says the gate refuses a number a double does not hold, quoting its digits as written', async () => {
    const file = join(dir, 'refused.yaml');
    await writeFile(
      file,
      'policy: policy.yaml\ncases:\n  - name: precise\n    tool: send_invoice\n    arguments: { to: a@example.com, amount: 1000.00000000000001 }\n    expect: { effect: ask }\n',
    );
    const lines: string[] = [];
    expect(
      await runPolicyTest(file, { print: (line) => lines.push(line), warn: (line) => lines.push(line) }),
    ).toBe(1);
    const text = lines.join('\n');
    expect(text).toContain('got deny: the gate refuses the call (tool-args-invalid');
    expect(text).toContain(
      'arguments.amount: the number 1000.00000000000001 has digits a double does not hold',
    );
    expect(text).not.toContain('matched rule');
  });

  it('reads YAML-only spellings of a number (+5, .5, 0x10) as the numbers they are', async () => {
    const file = join(dir, 'spellings.yaml');
    const spelled = (name: string, amount: string, effect: string) =>
      `  - name: ${name}\n    tool: send_invoice\n    arguments: { to: a@example.com, amount: ${amount} }\n    expect: { effect: ${effect} }\n`;
    await writeFile(
      file,
      `policy: policy.yaml\ncases:\n${spelled('plus', '+5', 'allow')}${spelled('dot', '.5', 'allow')}${spelled('hex', '0x7D0', 'ask')}${spelled('octal', '0o17', 'allow')}`,
    );
    const lines: string[] = [];
    const code = await runPolicyTest(file, {
      print: (line) => lines.push(line),
      warn: (line) => lines.push(line),
    });
    expect(lines.join('\n')).toContain('4 passed, 0 failed');
    expect(code).toBe(0);
  });
});
