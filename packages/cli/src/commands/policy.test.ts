// `callgate policy test` through the command line parser, on real files (`policy replay`:
// policy-replay.test.ts).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callgate } from '../test-support.js';
import { POLICY, TOOLS } from './policy-fixture.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callgate-policy-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('callgate policy test', () => {
  it('passes a policy that does what its cases say, exit 0', async () => {
    await writeFile(
      join(dir, 'good.yaml'),
      `policy: policy.yaml
tools:
  delete_file: { annotations: { destructiveHint: true } }
cases:
  - name: reads are allowed
    tool: read_file
    arguments: { path: notes.txt }
    expect: { effect: allow, rules: [reads] }
  - name: force is scrubbed before the decision
    tool: send_invoice
    arguments: { to: acme, amount: 10, force: true }
    expect: { effect: allow, rules: [invoices], scrubbed: [force] }
  - name: deletes from untrusted input are denied
    tool: delete_file
    arguments: { path: a }
    provenance: { untrusted: true, sources: [web_fetch] }
    expect: { effect: deny, rules: [untrusted-deletes] }
`,
    );
    const result = await callgate(['policy', 'test', join(dir, 'good.yaml')]);
    expect(result.lines.join('\n')).toContain('3 cases: 3 passed, 0 failed');
    expect(result.code).toBe(0);
  });

  it('names each failing case and its line, exit 1', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      `policy: policy.yaml
cases:
  - name: reads are allowed
    tool: read_file
    expect: { effect: allow }
  - name: big invoices are allowed
    tool: send_invoice
    arguments: { to: acme, amount: 5000 }
    expect: { effect: allow, rules: [invoices] }
  - name: nothing is scrubbed
    tool: send_invoice
    arguments: { to: acme, amount: 5, force: false }
    expect: { scrubbed: [] }
`,
    );
    const result = await callgate(['policy', 'test', file]);
    const text = result.lines.join('\n');
    expect(result.code).toBe(1);
    expect(text).toContain(`ok    reads are allowed (${file}:3)`);
    expect(text).toContain(`FAIL  big invoices are allowed (${file}:6)`);
    expect(text).toContain('expected effect allow, got ask');
    expect(text).toContain('expected rules invoices, got big-invoices');
    expect(text).toContain(`FAIL  nothing is scrubbed (${file}:10)`);
    expect(text).toContain('expected scrubbed (none), got force');
    expect(text).toContain('3 cases: 1 passed, 2 failed');
    const json = await callgate(['policy', 'test', file, '--json']);
    expect(JSON.parse(json.lines.join('\n'))).toMatchObject({ passed: 1, failed: 2 });
  });

  it('refuses a broken cases file or policy with the place, exit 2', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(
      file,
      'policy: policy.yaml\ncases:\n  - tool: read_file\n    expect: { effect: maybe }\n',
    );
    const broken = await callgate(['policy', 'test', file]);
    expect(broken.code).toBe(2);
    expect(broken.lines.join('\n')).toContain(
      `${file}:3: cases[0].expect.effect: expected allow, ask or deny`,
    );
    await writeFile(
      join(dir, 'bad-policy.yaml'),
      'version: 1\nrules:\n  - id: r\n    when: "args.x >"\n    effect: allow\n',
    );
    const badPolicy = await callgate([
      'policy',
      'test',
      join(dir, 'good.yaml'),
      '--policy',
      join(dir, 'bad-policy.yaml'),
    ]);
    expect(badPolicy.code).toBe(2);
    expect(badPolicy.lines.join('\n')).toMatch(/bad-policy\.yaml:4:\d+: rule "r"/);
  });
});

describe('callgate policy test agrees with the gate', () => {
  it('expects, for generated calls, exactly what an engine on the same policy decides', async () => {
    const store = new MemoryStore();
    const signer = logSignerFromPrivateKey('test.local/log', generateEd25519KeyPair().privateKey);
    const ledger = await Ledger.open(store, { signer, origin: 'test.local/log' });
    const tools = [
      ...TOOLS,
      { name: 'delete_file', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } },
    ];
    const engine = new Engine({ store, ledger, policy: loadPolicy(POLICY), tools });
    const call = fc.oneof(
      fc.record({
        tool: fc.constant('read_file'),
        arguments: fc.record({ path: fc.string({ maxLength: 6 }) }),
      }),
      fc.record({
        tool: fc.constant('send_invoice'),
        arguments: fc.record(
          {
            to: fc.constantFrom('acme', 'beta'),
            amount: fc.integer({ min: -5, max: 3000 }),
            force: fc.boolean(),
          },
          { requiredKeys: ['to', 'amount'] },
        ),
      }),
      fc.record({ tool: fc.constant('delete_file'), arguments: fc.record({ path: fc.constant('x') }) }),
    );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        async (calls, untrusted) => {
          round += 1;
          const run = await engine.startRun({ principal: 'bot', framework: 'test' });
          if (untrusted) {
            // Nothing here is untrusted output: provenance stays false, as the cases say.
          }
          const verdicts = await engine.decide(
            run.run_id,
            calls.map((item, index) => ({ id: `c${index}`, ...item })),
          );
          const cases = verdicts.flatMap((verdict, index) => {
            const item = calls[index];
            if (!verdict.decision || !item || (verdict.error?.kind && verdict.error.kind !== 'policy-denied'))
              return [];
            const scrubbed = 'force' in item.arguments ? ['force'] : [];
            return [
              {
                name: `c${index}`,
                tool: item.tool,
                arguments: item.arguments,
                run: { principal: 'bot', framework: 'test' },
                ...(item.tool === 'delete_file' ? { annotations: { destructiveHint: true } } : {}),
                expect: { effect: verdict.decision.effect, rules: verdict.decision.rules, scrubbed },
              },
            ];
          });
          if (cases.length === 0) return;
          const file = join(dir, `generated-${round}.yaml`);
          await writeFile(file, JSON.stringify({ policy: 'policy.yaml', cases }));
          const result = await callgate(['policy', 'test', file]);
          expect(result.lines.join('\n')).toContain(`${cases.length} passed, 0 failed`);
          expect(result.code).toBe(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
