// Tool specs an agent registered survive a server restart: the engine of the next process knows
// them before its first decision (no spurious tool-not-found on the first call after it).
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { createApiKey } from '../keys.js';

const POLICY =
  'version: 1\ndefault: deny\nrules:\n  - id: all\n    match: { tools: ["*"] }\n    effect: allow\n';
const SPEC = {
  name: 'lookup',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

async function serverOn(store: MemoryStore) {
  const signer = logSignerFromPrivateKey('test.local/restart', generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin: 'test.local/restart' });
  const engine = new Engine({ store, ledger, policy: loadPolicy(POLICY, { source: 'p.yaml' }) });
  const app = createApp({ engine, publicKey: signer.verifierKey });
  const post = async (path: string, key: string, body: unknown) => {
    const response = await app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as {
      run_id: string;
      verdicts: { status: string; error?: { kind: string } }[];
    };
  };
  return { engine, post };
}

describe('a server restart', () => {
  it('keeps the tool specs agents registered', async () => {
    const store = new MemoryStore();
    const first = await serverOn(store);
    const { key } = await createApiKey(store, { role: 'agent', name: 'agent-1' });
    const run = await first.post('/v1/runs', key, { framework: 'vitest' });
    const decided = await first.post(`/v1/runs/${run.run_id}/decisions`, key, {
      tools: [SPEC],
      calls: [{ id: 'a', tool: 'lookup', arguments: { q: 'x' } }],
    });
    expect(decided.verdicts[0]?.status).toBe('allowed');
    await first.engine.close();

    // The next process: a new engine on the same store; the agent does not send the spec again.
    const second = await serverOn(store);
    const after = await second.post(`/v1/runs/${run.run_id}/decisions`, key, {
      calls: [{ id: 'b', tool: 'lookup', arguments: { q: 'y' } }],
    });
    expect(after.verdicts[0]).toMatchObject({ status: 'allowed' });
    await second.engine.close();
  });
});
