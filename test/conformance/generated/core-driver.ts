// Generated runs through core's executeStep (in-process engine on a MemoryStore, reviewers as an
// approval port), checked from outside after each run. `npm run fuzz` runs many more.
import { CallbackApprovalPort, Engine, executeStep, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import type { ToolCall } from '@callgate/protocol';
import { expect } from 'vitest';
import { checkRun, type Tally } from './checks.js';
import {
  argumentsOf,
  GENERATED_POLICY,
  GENERATED_TOOLS,
  type GeneratedRun,
  idOf,
  type ReviewerAct,
  resultOf,
  TOOL_NAMES,
} from './runs.js';

const signer = logSignerFromPrivateKey('generated.local/log', generateEd25519KeyPair().privateKey);
const policy = loadPolicy(GENERATED_POLICY, { source: 'generated.yaml' });

/** Drives one generated run through executeStep and checks it. */
export async function runThroughCore(run: GeneratedRun, tally?: Tally): Promise<void> {
  const store = new MemoryStore();
  const ledger = await Ledger.open(store, { signer, origin: 'generated.local/log' });
  // What the reviewer of each approval does, by call id (set before each step).
  const reviewerOf = new Map<string, ReviewerAct>();
  const port = new CallbackApprovalPort((approval) => {
    const act = reviewerOf.get(approval.call_id) ?? 'none';
    if (act === 'approve' || act === 'twice') return { approved: true, reviewer: 'alice' };
    if (act === 'deny') return { approved: false, reviewer: 'bob', reason: 'no' };
    if (act === 'edit')
      return { approved: true, reviewer: 'eve', arguments: { ...(approval.arguments as object), amount: 1 } };
    return undefined; // none / late: nobody answers in time
  });
  const engine = new Engine({ store, ledger, policy, tools: GENERATED_TOOLS, approvalPorts: [port] });
  const started = await engine.startRun({ principal: 'generated', framework: 'fast-check' });
  const runId = started.run_id;
  const sideEffects = new Map<string, number>();
  const results: Array<Array<{ call_id: string }>> = [];
  const before: string[] = [];
  let index = 0;
  for (let step = 0; step < run.steps.length; step++) {
    const generated = run.steps[step] ?? [];
    const thisStep: string[] = [];
    const calls: ToolCall[] = generated.map((call) => {
      const id = idOf(call, step, index, thisStep, before);
      if (id) thisStep.push(id);
      const args = argumentsOf(call, index++);
      if (id) reviewerOf.set(id, call.reviewer);
      return { ...(id !== undefined ? { id } : {}), tool: TOOL_NAMES[call.tool], arguments: args.value };
    });
    const acts = new Map(generated.map((call, position) => [position, call.act]));
    const controller = new AbortController();
    const stepResults = await executeStep(
      engine,
      runId,
      calls,
      async (call) => {
        sideEffects.set(call.call_id, (sideEffects.get(call.call_id) ?? 0) + 1);
        const position = calls.findIndex((sent) => sent.id === call.call_id);
        const act = acts.get(position) ?? 'succeed';
        if (act === 'throw') throw new Error('the tool failed');
        if (act === 'hang')
          await new Promise((_resolve, reject) =>
            setTimeout(() => reject(new Error('the tool hung and was given up on')), 1),
          );
        return resultOf(act, position);
      },
      {
        approvalWaitMs: 5,
        signal: controller.signal,
        message: { role: 'assistant', content: `step ${step}` },
      },
    );
    results.push(stepResults.map((result) => ({ call_id: result.call_id })));
    // Late and second answers reach approvals that are no longer pending: refused, and recorded.
    for (const result of stepResults) {
      const act = reviewerOf.get(result.call_id);
      const approval = result.verdict.approval;
      if (approval && (act === 'late' || act === 'twice')) {
        await expect(
          engine.respondToApproval(approval.id, { approved: act === 'late', reviewer: 'mallory' }),
        ).rejects.toMatchObject({ kind: 'conflict' });
      }
    }
    before.push(...thisStep);
  }
  await engine.endRun(runId);
  const bundle = await engine.exportRun(runId);
  checkRun({ steps: run.steps, results, sideEffects, bundle, publicKey: signer.verifierKey }, tally);
  await engine.close();
}
