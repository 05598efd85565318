// Generated runs through the HTTP API (the Hono app, `app.request()`), driven as an agent and a
// reviewer would drive it: decisions, grant consumes, outcomes, approvals answered (and answered
// late or twice), runs ended. Bodies are written as raw JSON text, so big integers travel with
// their digits. Checked from outside after each run.
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { createApiKey, createApp } from '@callgate/server';
import { expect } from 'vitest';
import { checkRun, type Tally } from './checks.js';
import {
  argumentsOf,
  GENERATED_POLICY,
  GENERATED_TOOLS,
  type GeneratedCall,
  type GeneratedRun,
  idOf,
  TOOL_NAMES,
} from './runs.js';

const signer = logSignerFromPrivateKey('generated.local/http', generateEd25519KeyPair().privateKey);
const policy = loadPolicy(GENERATED_POLICY, { source: 'generated.yaml' });

// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely, field by field
type Json = any;

/** Raw JSON text for a value, with `raw` texts put in place of their `"__RAW_n__"` placeholders. */
function bodyText(value: unknown, raw: string[]): string {
  return JSON.stringify(value).replace(/"__RAW_(\d+)__"/g, (_match, index) => raw[Number(index)] ?? 'null');
}

/** The arguments as an agent sends them over HTTP: JSON has no NaN, so those go as model text. */
function httpArguments(call: GeneratedCall, index: number, raw: string[]): unknown {
  const { value } = argumentsOf(call, index);
  if (call.arguments === 'nan') return JSON.stringify(value).replace('null', 'NaN');
  if (
    (call.arguments === 'huge-integer' || call.arguments === 'inexact-decimal') &&
    typeof value === 'string'
  ) {
    raw.push(value); // the object itself, written with the digits as sent
    return `__RAW_${raw.length - 1}__`;
  }
  return value;
}

/** A tool result as an agent reports it: non-canonical values in their JSON wire forms. */
function httpResult(call: GeneratedCall, index: number, raw: string[]): unknown {
  if (call.act !== 'non-canonical') return { done: index };
  if (index % 3 === 0) return { text: 'bad \uDC00' };
  raw.push(index % 3 === 1 ? '{"id":12345678901234567890}' : '{"ratio":1e-400}');
  return `__RAW_${raw.length - 1}__`;
}

export async function runThroughHttp(run: GeneratedRun, tally?: Tally): Promise<void> {
  const store = new MemoryStore();
  const ledger = await Ledger.open(store, { signer, origin: 'generated.local/http' });
  const engine = new Engine({ store, ledger, policy, tools: GENERATED_TOOLS });
  const app = createApp({ engine, publicKey: signer.verifierKey });
  const agent = (await createApiKey(store, { role: 'agent', name: 'agent' })).key;
  const reviewer = (await createApiKey(store, { role: 'reviewer', name: 'reviewer' })).key;
  const send = async (method: string, path: string, key: string, body?: string) => {
    const response = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return { status: response.status, json: (text ? JSON.parse(text) : undefined) as Json };
  };
  const runId = (await send('POST', '/v1/runs', agent, '{"framework":"fast-check"}')).json.run_id as string;
  const sideEffects = new Map<string, number>();
  const results: Array<Array<{ call_id: string }>> = [];
  const before: string[] = [];
  let index = 0;
  for (let step = 0; step < run.steps.length; step++) {
    const generated = run.steps[step] ?? [];
    const thisStep: string[] = [];
    const raw: string[] = [];
    const calls = generated.map((call) => {
      const id = idOf(call, step, index, thisStep, before);
      if (id) thisStep.push(id);
      return {
        ...(id !== undefined ? { id } : {}),
        tool: TOOL_NAMES[call.tool],
        arguments: httpArguments(call, index++, raw),
      };
    });
    const decided = await send(
      'POST',
      `/v1/runs/${runId}/decisions`,
      agent,
      bodyText({ message: { role: 'assistant', content: `step ${step}` }, calls }, raw),
    );
    if (decided.status !== 200)
      throw new Error(`decisions answered ${decided.status}: ${JSON.stringify(decided.json)}`);
    const verdicts = decided.json.verdicts as Json[];
    results.push(verdicts.map((verdict) => ({ call_id: verdict.call_id })));
    for (let position = 0; position < verdicts.length; position++) {
      const verdict = verdicts[position];
      const call = generated[position] as GeneratedCall;
      const report = (outcome: Json) =>
        send(
          'POST',
          `/v1/runs/${runId}/outcomes`,
          agent,
          bodyText({ call_id: verdict.call_id, attempt: verdict.attempt, ...outcome }, raw),
        );
      let grant = verdict.grant;
      let digest = verdict.arguments_digest;
      if (verdict.status === 'refused') {
        // A client may never report a refused call's outcome (nothing ran); the run's end must
        // still give the call its one call-end. A refused call has no reviewer: its `none` draws
        // that client.
        if (call.reviewer !== 'none')
          await report({
            outcome: 'denied',
            error_kind: verdict.error.kind,
            result: { error: verdict.error },
          });
        continue;
      }
      if (verdict.status === 'pending') {
        const approvalId = verdict.approval.id as string;
        const act = call.reviewer;
        if (act === 'approve' || act === 'twice')
          await send('POST', `/v1/approvals/${approvalId}/approve`, reviewer, '{}');
        else if (act === 'deny')
          await send('POST', `/v1/approvals/${approvalId}/deny`, reviewer, '{"reason":"no"}');
        else if (act === 'edit')
          await send(
            'POST',
            `/v1/approvals/${approvalId}/approve`,
            reviewer,
            JSON.stringify({ arguments: { ...verdict.arguments, amount: 1 } }),
          );
        if (act === 'twice') {
          const again = await send('POST', `/v1/approvals/${approvalId}/deny`, reviewer, '{}');
          expect(again.status).toBe(409);
        }
        const state = (await send('GET', `/v1/approvals/${approvalId}?wait=0`, agent)).json;
        if (state.approval.status === 'pending') {
          await send('POST', `/v1/approvals/${approvalId}/withdraw`, agent, '{"reason":"gave up"}');
          if (act === 'late') {
            const late = await send('POST', `/v1/approvals/${approvalId}/approve`, reviewer, '{}');
            expect(late.status).toBe(409);
          }
          await report({ outcome: 'denied', error_kind: 'approval-expired' });
          continue;
        }
        if (state.approval.status !== 'approved' || !state.grant) {
          await report({ outcome: 'denied', error_kind: 'approval-denied' });
          continue;
        }
        grant = state.grant;
        digest = state.grant.arguments_digest;
      }
      // A dishonest report first: claiming the grant before consuming it is refused.
      if (position === 0) {
        const claimed = await report({ outcome: 'ok', grant_consumed: true, result: 'forged' });
        expect(claimed.status).toBeGreaterThanOrEqual(400);
      }
      const consumed = await send(
        'POST',
        '/v1/grants/consume',
        agent,
        JSON.stringify({
          token: grant.token,
          run_id: runId,
          call_id: verdict.call_id,
          tool: verdict.tool,
          arguments_digest: digest,
        }),
      );
      if (consumed.status !== 200) {
        await report({ outcome: 'denied', error_kind: 'grant-invalid' });
        continue;
      }
      sideEffects.set(verdict.call_id, (sideEffects.get(verdict.call_id) ?? 0) + 1);
      if (call.act === 'hang') continue; // the agent never reports: the run's end closes the call
      const answered =
        call.act === 'throw'
          ? await report({
              outcome: 'error',
              grant_consumed: true,
              result: { error: { kind: 'tool-error', message: 'failed' } },
            })
          : await report({ outcome: 'ok', grant_consumed: true, result: httpResult(call, position, raw) });
      if (answered.status !== 200)
        throw new Error(`outcome answered ${answered.status}: ${JSON.stringify(answered.json)}`);
    }
    before.push(...thisStep);
  }
  const ended = await send('POST', `/v1/runs/${runId}/end`, agent, '{}');
  if (ended.status !== 200) throw new Error(`end answered ${ended.status}`);
  const bundle = await engine.exportRun(runId);
  checkRun({ steps: run.steps, results, sideEffects, bundle, publicKey: signer.verifierKey }, tally);
  await engine.close();
}
