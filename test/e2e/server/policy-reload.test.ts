// Changing the policy of a running `callgate serve`: SIGHUP rereads the policy file, `callgate
// policy reload` sends one; a broken policy is refused with its line:column and the old one stays.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CallgateClient } from '@callgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../gateway/harness.js';
import { POLICY_YAML, runCallgate, type ServerProcess, startCallgate } from './harness.js';

let server: ServerProcess;
beforeAll(async () => {
  server = await startCallgate({ keys: { bot: 'agent', root: 'admin' } });
}, 60_000);
afterAll(async () => {
  expect(await server?.stop()).toBe(0);
}, 30_000);

const EVERY_INVOICE_ASKS = `version: 1
default: deny
rules:
  - id: every-invoice-asks
    match: { tools: [send_invoice] }
    effect: ask
`;

describe('policy reload on a running server', () => {
  it('rereads the policy file on SIGHUP, and takes one from callgate policy reload', async () => {
    const agent = new CallgateClient({ url: server.url, apiKey: server.keys.bot ?? '' });
    const run = await agent.startRun({ framework: 'reload-test' });
    const effect = async (id: string) =>
      (await agent.decide(run.run_id, [{ id, tool: 'send_invoice', arguments: { to: 'acme', amount: 10 } }]))
        .verdicts[0]?.decision?.effect;
    expect(await effect('a')).toBe('allow');

    await writeFile(join(server.dir, 'policy.yaml'), EVERY_INVOICE_ASKS);
    server.signal('SIGHUP');
    await eventually(async () => expect(await effect(`b-${Date.now()}`)).toBe('ask'), 10_000);
    expect(server.output()).toContain('policy reloaded');

    // A broken file on SIGHUP: refused (logged with its place), the policy in force stays.
    await writeFile(join(server.dir, 'policy.yaml'), 'version: 1\nrules:\n  - id: r\n    effect: perhaps\n');
    server.signal('SIGHUP');
    await eventually(() => expect(server.output()).toMatch(/policy\.yaml:4:\d+: rule \\?"r\\?"/), 10_000);
    expect(await effect('c')).toBe('ask');

    const env = { CALLGATE_URL: server.url, CALLGATE_API_KEY: server.keys.root ?? '' };
    const badFile = join(server.dir, 'bad.yaml');
    await writeFile(
      badFile,
      'version: 1\nrules:\n  - id: broken\n    when: "args.amount >"\n    effect: allow\n',
    );
    const refused = await runCallgate(['policy', 'reload', '--file', badFile], env);
    // A policy that does not load is bad input, as for `callgate policy test`: exit 2.
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/policy-invalid: bad\.yaml:4:\d+: rule "broken"/);
    expect(refused.stdout).toBe('');
    const goodFile = join(server.dir, 'good.yaml');
    await writeFile(goodFile, POLICY_YAML);
    const reloaded = await runCallgate(['policy', 'reload', '--file', goodFile], env);
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toContain('policy in force: sha256:');
    expect(await effect('d')).toBe('allow');
    const byAgent = await runCallgate(['policy', 'reload'], {
      ...env,
      CALLGATE_API_KEY: server.keys.bot ?? '',
    });
    expect(byAgent.code).toBe(1);
    expect(byAgent.stderr).toContain('forbidden');
  }, 60_000);
});
