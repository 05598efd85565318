// The digits a client sent are the digits the gate sees (docs/ledger.md, invariant 4): every JSON
// body is parsed losslessly, so an integer beyond ±(2^53−1) is refused in tool arguments quoting
// its digits as sent, and committed under callgate-normalize/1 in messages and results (never
// rounded).
import type { LedgerRecord } from '@callgate/core';
import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';

const BIG = '9007199254740993'; // 2^53 + 1: JSON.parse reads it as ...992

describe('lossless HTTP ingress', () => {
  it('quotes a big integer in tool arguments as sent, and records it in messages and results unrounded', async () => {
    const { call, keys, engine } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id;
    const decided = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      raw: `{"message":{"role":"assistant","content":{"n":${BIG}}},"calls":[{"id":"big","tool":"send_invoice","arguments":{"to":"a","amount":${BIG}}},{"id":"ok","tool":"read_file","arguments":{"path":"a"}}]}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(decided.status).toBe(200);
    const [refused, allowed] = decided.json.verdicts;
    expect(refused.status).toBe('refused');
    expect(refused.error.kind).toBe('tool-args-invalid');
    expect(refused.error.message).toContain(BIG);
    const consumed = await call('POST', '/v1/grants/consume', {
      key: keys.agent,
      body: {
        token: allowed.grant.token,
        run_id: id,
        call_id: 'ok',
        tool: 'read_file',
        arguments_digest: allowed.arguments_digest,
      },
    });
    expect(consumed.status).toBe(200);
    const outcome = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      raw: `{"call_id":"ok","outcome":"ok","grant_consumed":true,"result":{"id":${BIG}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(outcome.json).toEqual({ outcome: 'ok' });
    const message = await call('POST', `/v1/runs/${id}/messages`, {
      key: keys.agent,
      raw: `{"role":"assistant","content":[${BIG}]}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(message.status).toBe(201);
    const records = (await engine.exportRun(id)).records as LedgerRecord[];
    const messages = records.filter((record) => record.type === 'model-message');
    expect(messages.map((record) => record.type === 'model-message' && record.content_normalized)).toEqual([
      ['unsafe-integer'],
      ['unsafe-integer'],
    ]);
    const end = records.find((record) => record.type === 'call-end' && record.call_id === 'ok');
    expect(end).toMatchObject({ outcome: 'ok', grant_consumed: true, result_normalized: ['unsafe-integer'] });
  });

  it('still refuses a duplicate key, naming it', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const answer = await call('POST', `/v1/runs/${run.json.run_id}/messages`, {
      key: keys.agent,
      raw: '{"role":"assistant","role":"user"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/role/);
  });

  it('accepts a lone surrogate where the gate commits the value, and refuses it where a record holds it', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id;
    const content = await call('POST', `/v1/runs/${id}/messages`, {
      key: keys.agent,
      raw: '{"role":"assistant","content":"bad \\ud800 text"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(content.status).toBe(201);
    const role = await call('POST', `/v1/runs/${id}/messages`, {
      key: keys.agent,
      raw: '{"role":"bad \\ud800 role"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(role.status).toBe(400);
    expect(role.json.error.path).toBe('body.role');
  });
});
