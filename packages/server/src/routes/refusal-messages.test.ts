// A refusal says what was wrong: a number a double does not hold is named as such (never by an
// internal class name), with its path; a page size says what it must be and quotes what was given;
// an outcome for a call whose approval was denied says it was denied.
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const raw = { 'content-type': 'application/json' };

describe('refusals of numbers a double does not hold', () => {
  it('names the field and says a double does not hold the digits (body fields)', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id as string;
    for (const digits of ['1e-400', '12345678901234567890', '123456789012345678.5']) {
      const outcome = await call('POST', `/v1/runs/${id}/outcomes`, {
        key: keys.agent,
        raw: `{"call_id":"c1","outcome":"ok","duration_ms":${digits}}`,
        headers: raw,
      });
      expect(outcome.status).toBe(400);
      expect(outcome.json.error.message).not.toContain('KeptNumber');
      expect(outcome.json.error.message).toContain(`body.duration_ms: the `);
      expect(outcome.json.error.message).toContain(`${digits} `);
      expect(outcome.json.error.message).toContain('a double does not hold');
      expect(outcome.json.error.path).toBe('body.duration_ms');
    }
    const labels = await call('POST', '/v1/runs', {
      key: keys.agent,
      raw: '{"framework":"vitest","labels":{"n":1e-400}}',
      headers: raw,
    });
    expect(labels.status).toBe(400);
    expect(labels.json.error.message).toContain(
      'body.labels.n: the number 1e-400 has digits a double does not hold',
    );
  });

  it('calls a decimal that reads as a whole double a decimal, not an integer beyond 2^53', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    for (const digits of ['123456789012345678.5', '9007199254740992.5']) {
      const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
        key: keys.agent,
        raw: `{"calls":[{"id":"c${digits.length}","tool":"send_invoice","arguments":{"to":"a","amount":${digits}}}]}`,
        headers: raw,
      });
      const message = decided.json.verdicts[0].error.message as string;
      expect(message).toContain(`the number ${digits} has digits a double does not hold`);
      expect(message).not.toContain('integer');
    }
  });

  it('says why a tool schema number is refused', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      raw: '{"tools":[{"name":"pay","inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":1000.00000000000001}}}}],"calls":[]}',
      headers: raw,
    });
    expect(decided.status).toBe(400);
    expect(decided.json.error.message).toContain(
      'inputSchema.properties.x.maximum: the number 1000.00000000000001 has digits a double does not hold',
    );
    expect(decided.json.error.message).not.toContain('must be number');
  });

  it('gives the path of an approval edit it refuses', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'pay', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }] },
    });
    const approvalId = decided.json.verdicts[0].approval.id as string;
    const approve = await call('POST', `/v1/approvals/${approvalId}/approve`, {
      key: keys.reviewer,
      raw: '{"arguments":{"to":"acme","amount":1000.00000000000001}}',
      headers: raw,
    });
    expect(approve.status).toBe(400);
    expect(approve.json.error.message).toContain('arguments.amount: the number 1000.00000000000001');
    expect(approve.json.error.path).toContain('arguments.amount');
  });
});

describe('page sizes', () => {
  it('says limit must be an integer 1..1000, quoting what was given', async () => {
    const { call, keys } = await testApp();
    for (const given of ['', 'abc', '0', '1.5', '5000']) {
      const listed = await call('GET', `/v1/runs?limit=${given}`, { key: keys.reviewer });
      expect(listed.status).toBe(400);
      expect(listed.json.error.message).toBe(
        `query.limit: must be an integer 1..1000 (got ${JSON.stringify(given)})`,
      );
    }
  });
});

describe('numbers in a query string', () => {
  it('are read exactly or refused, never rounded: limit, expect_size, wait (generated)', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'w1', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }] },
    });
    const approvalId = decided.json.verdicts[0].approval.id as string;
    const queries = [
      {
        name: 'limit',
        path: (value: string) => `/v1/runs?limit=${value}`,
        // Decimal digits, no leading zero (`07` is refused as `--limit 07` is).
        exact: (value: string) =>
          /^(?:0|[1-9]\d{0,15})$/.test(value) && Number(value) >= 1 && Number(value) <= 1000,
      },
      {
        name: 'wait',
        path: (value: string) => `/v1/approvals/${approvalId}?wait=${value}`,
        // Whole milliseconds 0..60 s, no leading zero (`07`, as `limit`); an answered approval is
        // not waited for, so nothing hangs.
        exact: (value: string) => /^(?:0|[1-9]\d?)(?:\.\d{1,3})?$/.test(value) && Number(value) <= 60,
      },
    ];
    await call('POST', `/v1/approvals/${approvalId}/deny`, { key: keys.reviewer, body: {} });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...queries),
        fc.oneof(
          fc.stringMatching(/^\d{1,3}(?:\.\d{1,20})?$/),
          fc.constantFrom(
            '1e2',
            '10.0000000000000001',
            '1.00000000000000001',
            ' 5',
            '+5',
            '0x10',
            '60.0001',
            '-0',
            '010',
            '07',
            '00.5',
          ),
        ),
        async (query, value) => {
          const answer = await call('GET', query.path(encodeURIComponent(value)), { key: keys.reviewer });
          expect(answer.status, `${query.name}=${value}`).toBe(query.exact(value) ? 200 : 400);
          if (answer.status === 400) expect(answer.json.error.message).toContain(`query.${query.name}: `);
        },
      ),
      // The spellings each query once refused differently, always tried.
      {
        numRuns: 60,
        examples: queries.flatMap((query) =>
          ['07', '00.5', '0.5', '60'].map((value) => [query, value] as [typeof query, string]),
        ),
      },
    );
    const bundle = await call('GET', `/v1/runs/${run.json.run_id}/bundle`, { key: keys.reviewer });
    for (const [value, status] of [
      ['3', 200],
      ['3.0', 400],
      ['2.0000000000000001', 400],
      ['9007199254740993', 400],
    ] as const) {
      const verified = await call('POST', `/v1/verify?expect_size=${value}`, {
        key: keys.reviewer,
        body: bundle.json,
      });
      expect(verified.status, `expect_size=${value}`).toBe(status);
    }
  });
});

describe('outcomes of a call whose approval was not given', () => {
  it('says the approval was denied, not that the call still waits', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id as string;
    const decided = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'k3', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }] },
    });
    const approvalId = decided.json.verdicts[0].approval.id as string;
    const denied = await call('POST', `/v1/approvals/${approvalId}/deny`, { key: keys.reviewer, body: {} });
    expect(denied.status).toBe(200);
    const outcome = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      body: { call_id: 'k3', outcome: 'ok' },
    });
    expect(outcome.status).toBe(409);
    expect(outcome.json.error.message).toContain(`approval ${approvalId} was denied, so it may not run`);
    expect(outcome.json.error.message).not.toContain('waits on');
  });
});
