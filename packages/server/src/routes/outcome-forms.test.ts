// One outcome gets the same checks whichever request carries it (docs/gate.md): alone on
// `/outcomes`, in its `{ outcomes: [...] }` list, carried by the next step's `/decisions`, or by
// the run's `/end`. Generated over those forms and results that have no canonical JSON form (a
// lone surrogate, an integer beyond 2^53, in a value or deeper): each is accepted and committed
// under callgate-normalize/1 with the same reasons, never refusing the whole request (which would
// leave a call that ran recorded as not completed, or a step undecided).
import type { LedgerRecord } from '@callgate/core';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const FORMS = ['single', 'list', 'decisions', 'end'] as const;
const RESULTS = [
  { raw: '{"s":"\\ud800"}', reasons: ['lone-surrogate'] },
  { raw: '["a\\udfff",1]', reasons: ['lone-surrogate'] },
  { raw: '{"n":9007199254740993}', reasons: ['unsafe-integer'] },
  { raw: '{"deep":{"s":"x\\ud83d"}}', reasons: ['lone-surrogate'] },
];

describe('an outcome in every request that carries it', () => {
  it('is accepted and committed normalised, whatever the form', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FORMS), fc.constantFrom(...RESULTS), async (form, result) => {
        const { call, keys, engine } = await testApp();
        const id = (await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } })).json
          .run_id as string;
        const decided = await call('POST', `/v1/runs/${id}/decisions`, {
          key: keys.agent,
          body: { calls: [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }] },
        });
        expect(decided.status).toBe(200);
        const outcome = `{"call_id":"c1","outcome":"ok","result":${result.raw}}`;
        const raw =
          form === 'single'
            ? outcome
            : form === 'decisions'
              ? `{"calls":[{"id":"c2","tool":"read_file","arguments":{"path":"b"}}],"outcomes":[${outcome}]}`
              : `{"outcomes":[${outcome}]}`;
        const path =
          form === 'decisions'
            ? `/v1/runs/${id}/decisions`
            : form === 'end'
              ? `/v1/runs/${id}/end`
              : `/v1/runs/${id}/outcomes`;
        const answered = await call('POST', path, {
          key: keys.agent,
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(answered.status, JSON.stringify(answered.json)).toBeLessThan(300);
        if (form === 'decisions') expect(answered.json.verdicts).toHaveLength(1);
        const records = (await engine.exportRun(id)).records as LedgerRecord[];
        const end = records.find((record) => record.type === 'call-end' && record.call_id === 'c1');
        expect(end).toMatchObject({ outcome: 'ok', result_normalized: result.reasons });
      }),
      { numRuns: 24 },
    );
  });
});
