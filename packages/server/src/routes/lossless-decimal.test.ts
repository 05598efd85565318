// The digits a client sent are the digits the gate sees, decimals too (docs/ledger.md, invariant
// 4): a decimal whose digits a double does not hold is refused in tool arguments quoting it as
// sent, and committed under callgate-normalize/2 (`inexact-number`) in messages and results;
// one it holds (another spelling of the same double) is gated as that number.
import type { LedgerRecord } from '@callgate/core';
import { numberHeldExactly } from '@callgate/core/json';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** Decimal tokens, many of them beyond a double's precision or range; none an unsafe integer. */
const token = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.bigInt({ min: 0n, max: 10n ** 18n }),
    fc.bigInt({ min: 0n, max: 10n ** 24n }),
    fc.constantFrom('', 'e-400', 'E-2', 'e-320', 'e+1', '0', '000'),
  )
  .map(([sign, whole, fraction, tail]) => `${sign}${whole}.${fraction}${tail}`)
  .filter((text) => {
    const number = Number(text);
    return Number.isFinite(number) && (!Number.isInteger(number) || Number.isSafeInteger(number));
  });

const raw = { 'content-type': 'application/json' };

describe('lossless HTTP ingress: decimals', () => {
  it('refuses a decimal a double does not hold quoting it, or gates the number it is (generated)', async () => {
    const { call, keys, engine } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id as string;
    let step = 0;
    await fc.assert(
      fc.asyncProperty(token, async (text) => {
        step++;
        const decided = await call('POST', `/v1/runs/${id}/decisions`, {
          key: keys.agent,
          raw: `{"message":{"role":"assistant","content":{"x":${text}}},"calls":[{"id":"d${step}","tool":"send_invoice","arguments":{"to":"a","amount":${text}}}]}`,
          headers: raw,
        });
        expect(decided.status).toBe(200);
        const [verdict] = decided.json.verdicts;
        const held = numberHeldExactly(text);
        if (held) {
          expect(verdict.error?.kind).not.toBe('tool-args-invalid');
        } else {
          expect(verdict.status).toBe('refused');
          expect(verdict.error.kind).toBe('tool-args-invalid');
          expect(verdict.error.message).toContain(` ${text} `);
          expect(verdict.error.message).toContain('arguments.amount');
        }
        const records = (await engine.exportRun(id)).records as LedgerRecord[];
        const message = records.filter((record) => record.type === 'model-message').at(-1);
        expect(message?.type === 'model-message' ? message.content_normalized : 'no message').toEqual(
          held ? undefined : ['inexact-number'],
        );
      }),
      { numRuns: 60 },
    );
  });

  it('commits a reported result holding such a decimal under callgate-normalize/2', async () => {
    const { call, keys, engine } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id;
    const decided = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'ok', tool: 'read_file', arguments: { path: 'a' } }] },
    });
    const [allowed] = decided.json.verdicts;
    await call('POST', '/v1/grants/consume', {
      key: keys.agent,
      body: {
        token: allowed.grant.token,
        run_id: id,
        call_id: 'ok',
        tool: 'read_file',
        arguments_digest: allowed.arguments_digest,
      },
    });
    const outcome = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      raw: '{"call_id":"ok","outcome":"ok","grant_consumed":true,"result":{"ratio":1000.00000000000001,"n":1.10}}',
      headers: raw,
    });
    expect(outcome.json).toEqual({ outcome: 'ok' });
    const records = (await engine.exportRun(id)).records as LedgerRecord[];
    const end = records.find((record) => record.type === 'call-end' && record.call_id === 'ok');
    expect(end).toMatchObject({ outcome: 'ok', result_normalized: ['inexact-number'] });
  });
});
