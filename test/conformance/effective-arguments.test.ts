// Effective arguments (docs/ledger.md invariant 5) through the real HTTP API: a call whose
// framework adds values the model did not send (`injected`) is decided on the model's arguments,
// its records carry the digest of the arguments that run beside the model's, the reviewer of an
// ask sees the injected values, and the bundle verifies --strict with the new record in it.
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { digestOf, generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey, verifyBundle } from '@callgate/core/ledger';
import { createApiKey, createApp } from '@callgate/server';
import { describe, expect, it } from 'vitest';
import { GENERATED_POLICY, GENERATED_TOOLS } from './generated/runs.js';

async function world() {
  const store = new MemoryStore();
  const signer = logSignerFromPrivateKey('effective.test/log', generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin: 'effective.test/log' });
  const engine = new Engine({
    store,
    ledger,
    policy: loadPolicy(GENERATED_POLICY, { source: 'generated.yaml' }),
    tools: GENERATED_TOOLS,
  });
  const app = createApp({ engine, publicKey: signer.verifierKey });
  const agent = (await createApiKey(store, { role: 'agent', name: 'agent' })).key;
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: await response.json() };
  };
  return { engine, send, publicKey: signer.verifierKey };
}

describe('effective arguments', () => {
  it('are recorded beside the model’s, shown to the reviewer, and verify', async () => {
    const { engine, send, publicKey } = await world();
    const run = (await send('POST', '/v1/runs', { framework: 'test' })).json.run_id as string;
    const injected = { to: 'acme-from-state' };
    const decided = await send('POST', `/v1/runs/${run}/decisions`, {
      calls: [
        { id: 'c1', tool: 'pay', arguments: { to: 'acme', amount: 5000 }, injected },
        { id: 'c2', tool: 'read_note', arguments: { key: 'k' } },
      ],
    });
    expect(decided.json).toMatchObject({ verdicts: expect.any(Array) });
    const [ask] = decided.json.verdicts;
    expect(ask.status).toBe('pending');
    // The reviewer sees which values the framework adds, apart from the model's.
    const approval = (await send('GET', `/v1/approvals/${ask.approval.id}?wait=0`)).json.approval;
    expect(approval.arguments).toEqual({ to: 'acme', amount: 5000 });
    expect(approval.injected).toEqual(injected);
    await send('POST', `/v1/runs/${run}/end`, {});
    const bundle = await engine.exportRun(run);
    const records = bundle.records as Array<Record<string, unknown>>;
    const effective = records.filter((record) => record.type === 'effective-arguments');
    expect(effective).toEqual([
      expect.objectContaining({
        call_id: 'c1',
        attempt: 1,
        tool: 'pay',
        injected: ['to'],
      }),
    ]);
    const decision = records.find((record) => record.type === 'call-decision' && record.call_id === 'c1');
    // Both digests are the gate's own, keyed alike in a version 2 record: the model's is the
    // decision's, the effective one that of other arguments.
    expect(decision?.arguments_digest).toBe(effective[0]?.arguments_digest);
    expect(effective[0]?.effective_arguments_digest).toMatch(/^(hmac-)?sha256:[0-9a-f]{64}$/);
    expect(String(effective[0]?.effective_arguments_digest).split(':')[0]).toBe(
      String(decision?.arguments_digest).split(':')[0],
    );
    expect(effective[0]?.effective_arguments_digest).not.toBe(effective[0]?.arguments_digest);
    // The digest the caller was given is the gate's unkeyed one of the model's arguments.
    expect(ask.arguments_digest).toBe(digestOf({ to: 'acme', amount: 5000 }));
    const report = verifyBundle(JSON.parse(JSON.stringify(bundle)), { publicKey, strict: true });
    expect(report.failures).toEqual([]);
    await engine.close();
  });

  it('refuses injected values that are not a JSON object, naming them', async () => {
    const { engine, send } = await world();
    const run = (await send('POST', '/v1/runs', { framework: 'test' })).json.run_id as string;
    const decided = await send('POST', `/v1/runs/${run}/decisions`, {
      calls: [{ id: 'c1', tool: 'read_note', arguments: { key: 'k' }, injected: 'not an object' }],
    });
    const verdict = decided.status === 200 ? decided.json.verdicts[0] : decided.json;
    expect(JSON.stringify(verdict)).toContain('injected');
    await engine.close();
  });
});
