// The record equals what happened (docs/ledger.md, "Invariants of the record"): one test per
// mechanism, each failing before the mechanism existed.
import type { LedgerRecord } from '@callgate/protocol';
import { testEngine } from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { CallbackApprovalPort } from '../approvals/port.js';
import { sha256Digest } from '../crypto.js';
import { parseJsonStrict } from '../json/safe-json.js';
import { executeStep } from './execute-step.js';

async function recordsOf(engine: Awaited<ReturnType<typeof testEngine>>['engine'], runId: string) {
  const bundle = await engine.exportRun(runId, { openings: true });
  return { bundle, records: bundle.records as LedgerRecord[] };
}

function openingOf(
  bundle: { openings?: { commitment: string; value: unknown }[] },
  commitment: string | null,
) {
  return bundle.openings?.find((opening) => opening.commitment === commitment)?.value;
}

describe('normalisation (callgate-normalize/1): a value with no canonical form never drops a record', () => {
  const cases: [string, unknown, string, string][] = [
    ['a lone surrogate', { text: 'ab\uD800cd' }, 'lone-surrogate', '{"text":"ab\uFFFDcd"}'],
    ['NaN', { score: Number.NaN }, 'non-finite-number', '{"score":NaN}'],
    ['Infinity', [Number.POSITIVE_INFINITY], 'non-finite-number', '[Infinity]'],
    ['a bigint', { id: 12345678901234567890n }, 'unsafe-integer', '{"id":12345678901234567890}'],
    [
      'digits kept by the lossless parser',
      { id: parseJsonStrict('{"n":9007199254740993}', 'r', undefined, { unsafeIntegers: 'keep-lossless' }) },
      'unsafe-integer',
      '{"id":{"n":9007199254740993}}',
    ],
  ];
  for (const [name, result, reason, raw] of cases) {
    it(`records a tool result holding ${name} as a marker over its raw bytes`, async () => {
      const { engine, runId } = await testEngine({ vault: true });
      const [step] = await executeStep(
        engine,
        runId,
        [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
        () => result,
      );
      expect(step?.ok).toBe(true);
      await engine.endRun(runId);
      const { bundle, records } = await recordsOf(engine, runId);
      const end = records.find((record) => record.type === 'call-end');
      expect(end).toMatchObject({ outcome: 'ok', result_normalized: [reason] });
      const marker = openingOf(bundle, end?.type === 'call-end' ? end.result_commitment : null);
      expect(marker).toEqual({
        $callgate: 'normalized',
        rule: 'callgate-normalize/1',
        reasons: [reason],
        bytes: Buffer.byteLength(raw, 'utf8'),
        sha256: sha256Digest(Buffer.from(raw, 'utf8')),
      });
    });
  }

  it('records message content holding NaN and a lone surrogate, saying so', async () => {
    const { engine, runId } = await testEngine({ vault: true });
    await engine.recordMessage(runId, { role: 'assistant', content: { a: Number.NaN, b: '\uDC00' } });
    await executeStep(engine, runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }], () => 'x', {
      message: { role: 'assistant', content: ['\uD83D'] },
    });
    const { records } = await recordsOf(engine, runId);
    const messages = records.filter((record) => record.type === 'model-message');
    expect(messages.map((message) => message.type === 'model-message' && message.content_normalized)).toEqual(
      [['lone-surrogate', 'non-finite-number'], ['lone-surrogate']],
    );
  });

  it('commits a canonical value as it is, with no marker', async () => {
    const { engine, runId } = await testEngine({ vault: true });
    await executeStep(engine, runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }], () => ({
      text: 'a\uD83D\uDE00b',
    }));
    const { bundle, records } = await recordsOf(engine, runId);
    const end = records.find((record) => record.type === 'call-end');
    expect(end).not.toHaveProperty('result_normalized');
    expect(openingOf(bundle, end?.type === 'call-end' ? end.result_commitment : null)).toEqual(
      {
        result: { text: 'a\uD83D\uDE00b' },
      }.result,
    );
  });
});

describe('grants: no outcome contradicts the ledger', () => {
  it('a failed consume is a refusal record and ends the call denied; a later "ran" is refused', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(
      runId,
      [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
      {
        issueGrants: true,
      },
    );
    const grant = verdict?.grant;
    if (!grant) throw new Error('no grant');
    await expect(
      engine.consumeGrant(grant.token, {
        run_id: runId,
        call_id: 'c1',
        tool: 'read_file',
        arguments_digest: 'sha256:0000',
      }),
    ).rejects.toMatchObject({ kind: 'grant-invalid' });
    await expect(
      engine.recordOutcome(runId, { call_id: 'c1', outcome: 'ok', result: 'x', grant_consumed: true }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    const { records } = await recordsOf(engine, runId);
    // The failed consume, then the outcome claiming the grant it did not get: both are evidence.
    expect(records.filter((record) => record.type === 'refusal')).toEqual([
      expect.objectContaining({ kind: 'grant-invalid', call_id: 'c1', tool: 'read_file' }),
      expect.objectContaining({ kind: 'outcome-contradicts-grant', call_id: 'c1', tool: 'read_file' }),
    ]);
    const ends = records.filter((record) => record.type === 'call-end');
    expect(ends).toEqual([expect.objectContaining({ outcome: 'denied', error_kind: 'grant-invalid' })]);
  });

  it('an outcome claiming a grant the gate never consumed is refused and recorded', async () => {
    const { engine, runId } = await testEngine();
    await engine.decide(runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }], {
      issueGrants: true,
    });
    await expect(
      engine.recordOutcome(runId, { call_id: 'c1', outcome: 'ok', result: 'x', grant_consumed: true }),
    ).rejects.toMatchObject({ kind: 'grant-invalid' });
    const { records } = await recordsOf(engine, runId);
    expect(records.filter((record) => record.type === 'refusal')).toEqual([
      expect.objectContaining({ kind: 'outcome-contradicts-grant', call_id: 'c1' }),
    ]);
    expect(records.filter((record) => record.type === 'call-end')).toEqual([]);
  });

  it('an outcome after a successful consume is accepted with grant_consumed', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(
      runId,
      [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
      {
        issueGrants: true,
      },
    );
    const grant = verdict?.grant;
    if (!grant || !verdict) throw new Error('no grant');
    await engine.consumeGrant(grant.token, {
      run_id: runId,
      call_id: 'c1',
      tool: 'read_file',
      arguments_digest: verdict.arguments_digest ?? '',
    });
    await expect(
      engine.recordOutcome(runId, { call_id: 'c1', outcome: 'ok', result: 'x', grant_consumed: true }),
    ).resolves.toBe('ok');
  });
});

describe('refused attempts are evidence', () => {
  it('a second answer to an approval is a refusal record naming the reviewer', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(runId, [
      { id: 'c1', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } },
    ]);
    const id = verdict?.approval?.id as string;
    await engine.respondToApproval(id, { approved: true, reviewer: 'alice' });
    await expect(
      engine.respondToApproval(id, { approved: false, reviewer: 'mallory' }),
    ).rejects.toMatchObject({
      kind: 'conflict',
    });
    const { records } = await recordsOf(engine, runId);
    expect(records.filter((record) => record.type === 'refusal')).toEqual([
      expect.objectContaining({
        kind: 'approval-not-pending',
        actor: 'mallory',
        approval_id: id,
        call_id: 'c1',
      }),
    ]);
  });

  it('is rate-limited per run: 100 records, the last marked suppressed', async () => {
    const { engine, runId } = await testEngine();
    for (let index = 0; index < 130; index++) {
      await engine
        .consumeGrant(`cgt_forged${index}`, {
          run_id: runId,
          call_id: `x${index}`,
          tool: 'read_file',
          arguments_digest: 'sha256:00',
        })
        .catch(() => undefined);
    }
    const { records } = await recordsOf(engine, runId);
    const refusals = records.filter((record) => record.type === 'refusal');
    expect(refusals).toHaveLength(100);
    expect(refusals.at(-1)).toMatchObject({ suppressed: true });
    expect(refusals.filter((record) => record.type === 'refusal' && record.suppressed)).toHaveLength(1);
  });
});

describe('the gate’s rules inside one step and inside strings', () => {
  it('two calls with one idempotency key in one step: one runs, one is idempotency-blocked', async () => {
    const { engine, runId } = await testEngine();
    let ran = 0;
    const results = await executeStep(
      engine,
      runId,
      [
        { id: 'a', tool: 'send_invoice', arguments: { to: 'acme', amount: 10 } },
        { id: 'b', tool: 'send_invoice', arguments: { to: 'acme', amount: 20 } },
      ],
      () => {
        ran++;
        return 'sent';
      },
    );
    expect(ran).toBe(1);
    expect(results.map((result) => (result.ok ? 'ok' : result.error.kind))).toEqual([
      'ok',
      'idempotency-blocked',
    ]);
  });

  it('an address from an untrusted page inside a longer argument marks the call; a common phrase does not', async () => {
    const { engine, runId } = await testEngine();
    await executeStep(
      engine,
      runId,
      [{ id: 'w', tool: 'web_fetch', arguments: { url: 'https://x' } }],
      () => ({
        text: 'Thank you for visiting. For refunds write to refunds@evil.example today.',
      }),
    );
    const [marked] = await engine.decide(runId, [
      { id: 'm', tool: 'send_invoice', arguments: { to: 'Please pay refunds@evil.example now', amount: 1 } },
    ]);
    expect(marked?.provenance?.untrusted).toBe(true);
    const [plain] = await engine.decide(runId, [
      { id: 'p', tool: 'send_invoice', arguments: { to: 'Thank you for visiting', amount: 1 } },
    ]);
    expect(plain?.provenance?.untrusted).toBe(false);
  });

  it('commits the tool-call arguments the model sent, before scrubbing removed a key', async () => {
    const { engine, runId } = await testEngine({ vault: true });
    const sent = { to: 'acme', amount: 10, force: true };
    await engine.decide(runId, [{ id: 'c1', tool: 'send_invoice', arguments: sent }], {
      message: { role: 'assistant' },
    });
    const { bundle, records } = await recordsOf(engine, runId);
    const message = records.find((record) => record.type === 'model-message');
    const commitment =
      message?.type === 'model-message' ? (message.tool_calls[0]?.arguments_commitment ?? null) : null;
    expect(openingOf(bundle, commitment)).toEqual({ to: 'acme', amount: 10, force: true });
  });
});

describe('approvals answered by a port are not recorded twice', () => {
  it('a port that answers after a reviewer leaves one response and one refusal', async () => {
    let answerLate: (() => void) | undefined;
    const late = new CallbackApprovalPort(
      () =>
        new Promise((resolve) => {
          answerLate = () => resolve({ approved: false, reviewer: 'port' });
        }),
    );
    const { engine, runId } = await testEngine({ ports: [late] });
    const [verdict] = await engine.decide(runId, [
      { id: 'c1', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } },
    ]);
    await engine.respondToApproval(verdict?.approval?.id as string, { approved: true, reviewer: 'alice' });
    answerLate?.();
    const { records } = await recordsOf(engine, runId);
    expect(records.filter((record) => record.type === 'approval-response')).toHaveLength(1);
  });
});

describe('abandoned runs', () => {
  it('a run idle past its limit is ended abandoned, its pending approval withdrawn first', async () => {
    let now = 1_000_000;
    const { engine, runId } = await testEngine({ clock: () => now, idleRunMs: 60_000 });
    const [verdict] = await engine.decide(runId, [
      { id: 'c1', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } },
    ]);
    now += 30_000;
    expect(await engine.endIdleRuns()).toEqual([]);
    now += 31_000;
    expect(await engine.endIdleRuns()).toEqual([runId]);
    expect((await engine.approval(verdict?.approval?.id as string)).approval.status).toBe('withdrawn');
    await expect(
      engine.respondToApproval(verdict?.approval?.id as string, { approved: true, reviewer: 'alice' }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    const records = (await engine.exportRun(runId)).records as LedgerRecord[];
    expect(records.at(-1)).toMatchObject({ type: 'run-end', status: 'abandoned' });
    expect(records.find((record) => record.type === 'call-end')).toMatchObject({ outcome: 'denied' });
    expect(records.find((record) => record.type === 'approval-response')).toMatchObject({
      status: 'withdrawn',
    });
    await engine.close();
  });
});

describe('a record that cannot be written', () => {
  it('fails the run closed from that moment: later decisions are refused, saying why', async () => {
    const { engine, ledger, runId } = await testEngine();
    const append = ledger.append.bind(ledger);
    ledger.append = (() => Promise.reject(new Error('disk full'))) as typeof ledger.append;
    await expect(engine.recordMessage(runId, { role: 'assistant', content: 'x' })).rejects.toThrow(
      'disk full',
    );
    ledger.append = append;
    await expect(
      engine.decide(runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }]),
    ).rejects.toMatchObject({ kind: 'gate-unavailable', message: expect.stringContaining('disk full') });
  });
});

describe('an ended run', () => {
  it('withdraws its pending approvals first, and no answer or grant can make one of its calls run later', async () => {
    const { engine, runId } = await testEngine();
    const [asked, allowed] = await engine.decide(
      runId,
      [
        { id: 'c1', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } },
        { id: 'c2', tool: 'read_file', arguments: { path: 'a' } },
      ],
      { issueGrants: true },
    );
    const approvalId = asked?.approval?.id as string;
    await engine.endRun(runId);
    expect((await engine.approval(approvalId)).approval.status).toBe('withdrawn');
    await expect(
      engine.respondToApproval(approvalId, { approved: true, reviewer: 'alice' }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    await expect(
      engine.consumeGrant(allowed?.grant?.token as string, {
        run_id: runId,
        call_id: 'c2',
        tool: 'read_file',
        arguments_digest: allowed?.arguments_digest ?? '',
      }),
    ).rejects.toMatchObject({ kind: 'grant-invalid' });
    const records = (await engine.exportRun(runId)).records as LedgerRecord[];
    expect(records.at(-1)).toMatchObject({ type: 'run-end' });
    const response = records.findIndex((record) => record.type === 'approval-response');
    expect(records[response]).toMatchObject({ status: 'withdrawn' });
    expect(response).toBeLessThan(records.length - 1);
  });
});
