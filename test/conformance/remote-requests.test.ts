// The remote Governor makes one request per step on the allow path: the decision consumes the
// grants of the calls the adapter runs, and a step's outcomes ride with the next decisions
// request or the run's end. Counted on the real server app's requests.
import { CallgateClient, remoteGovernor } from '@callgate/client';
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { GovernedCalls } from '@callgate/core/adapter';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey, verifyBundle } from '@callgate/core/ledger';
import { createApiKey, createApp } from '@callgate/server';
import { describe, expect, it } from 'vitest';

const POLICY = `
version: 1
default: deny
rules:
  - id: reads
    match: { tools: [read_note] }
    effect: allow
`;
const SPEC = {
  name: 'read_note',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
};

async function world() {
  const store = new MemoryStore();
  const origin = 'remote-requests.test/log';
  const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin });
  const engine = new Engine({ store, ledger, policy: loadPolicy(POLICY), tools: [SPEC] });
  const app = createApp({ engine, publicKey: signer.verifierKey });
  const { key } = await createApiKey(store, { role: 'agent', name: 'agent' });
  const requests: string[] = [];
  const client = new CallgateClient({
    url: 'http://callgate.test',
    apiKey: key,
    fetch: (input, init) => {
      requests.push(
        `${init?.method ?? 'GET'} ${new URL(String(input)).pathname.replace(/runs\/[^/]+/, 'runs/:id')}`,
      );
      return Promise.resolve(app.request(String(input), init));
    },
  });
  return { engine, store, signer, requests, governor: remoteGovernor(client) };
}

describe('remote governor, one request per step', () => {
  it('decides with consume, carries outcomes to the next step and to the run’s end', async () => {
    const { engine, store, requests, governor } = await world();
    const { run_id: runId } = await governor.startRun({ framework: 'vitest' });
    const calls = new GovernedCalls({ governor, runId });
    for (let step = 0; step < 3; step++) {
      const [call] = await calls.decide([
        { id: `c${step}`, tool: 'read_note', arguments: { name: `n${step}` } },
      ]);
      const ran = await calls.run(call as Parameters<typeof calls.run>[0], (args) => `text of ${args.name}`);
      expect(ran.ok).toBe(true);
    }
    await calls.end('completed');
    expect(requests).toEqual([
      'POST /v1/runs',
      'POST /v1/runs/:id/decisions',
      'POST /v1/runs/:id/decisions',
      'POST /v1/runs/:id/decisions',
      'POST /v1/runs/:id/end',
    ]);
    const records = await store.readRunRecords(runId);
    const order = records
      .filter((record) => record.type === 'call-decision' || record.type === 'call-end')
      .map((record) => `${record.type}:${(record as { call_id: string }).call_id}`);
    expect(order).toEqual([
      'call-decision:c0',
      'call-end:c0',
      'call-decision:c1',
      'call-end:c1',
      'call-decision:c2',
      'call-end:c2',
    ]);
    expect(
      records
        .filter((record) => record.type === 'call-end')
        .every((record) => record.grant_consumed === true),
    ).toBe(true);
    const bundle = JSON.parse(JSON.stringify(await engine.exportRun(runId)));
    expect(verifyBundle(bundle, { strict: true }).ok).toBe(true);
  });

  it('spends a grant consumed with its decision once, for exactly its call; flush sends kept outcomes', async () => {
    const { store, requests, governor } = await world();
    const { run_id: runId } = await governor.startRun({ framework: 'vitest' });
    const [verdict] = await governor.decide(runId, [
      { id: 'g1', tool: 'read_note', arguments: { name: 'a' } },
    ]);
    expect(verdict?.grant_consumed).toBe(true);
    const grant = verdict?.grant;
    if (!grant) throw new Error('no grant');
    const binding = {
      run_id: runId,
      call_id: 'g1',
      tool: 'read_note',
      arguments_digest: grant.arguments_digest,
    };
    await expect(governor.consumeGrant(grant.token, { ...binding, call_id: 'other' })).rejects.toMatchObject({
      kind: 'grant-invalid',
    });
    // Spent by the mismatch: the server refuses it too (it was consumed with the decision).
    await expect(governor.consumeGrant(grant.token, binding)).rejects.toMatchObject({
      kind: 'grant-invalid',
    });
    await governor.recordOutcome(runId, { call_id: 'g1', outcome: 'ok', result: 'a', grant_consumed: true });
    expect((await store.listCalls(runId))[0]?.outcome).toBeUndefined();
    await governor.flush();
    expect((await store.listCalls(runId))[0]?.outcome).toBe('ok');
    expect(requests.filter((request) => request.includes('/outcomes'))).toEqual([
      'POST /v1/runs/:id/outcomes',
    ]);
  });
});
