// What the framework adapters' generated runs share: one engine (MemoryStore, signed ledger, the
// generated policy) for a whole pass, reviewers answering through an approval port as each
// generated call says, the text a model writes for each generated call, and the check made from
// outside once a run is over. Each adapter's `generated.test.ts` plays the runs through its real
// framework with a scripted model and hands the run here.
import { CallbackApprovalPort, Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { type Governor, localGovernor } from '@callgate/core/adapter';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import { checkRun, type Tally } from './checks.js';
import {
  GENERATED_POLICY,
  GENERATED_TOOLS,
  type GeneratedCall,
  type GeneratedRun,
  indexOfArguments,
  modelSteps,
  type ReviewerAct,
  resultOf,
  type ToolAct,
} from './runs.js';

export type { ModelCall } from './runs.js';
export { indexOfArguments } from './runs.js';

/** How many runs one engine of a pass serves before a fresh one takes over. */
const ENGINE_RUNS = 250;

/**
 * One engine for a whole pass of generated runs (as one server serves many runs): reviewers
 * answer each approval as its generated call says, tools bump a
 * side-effect counter by the call id the framework hands them and act as generated.
 */
export async function adapterWorld(name: string) {
  const origin = `generated.local/${name}`;
  const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
  // A fresh engine every ENGINE_RUNS runs: a long pass would otherwise grow one MemoryStore
  // without bound and slow every later run.
  const open = async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(store, { signer, origin });
    const engine = new Engine({
      store,
      ledger,
      policy: loadPolicy(GENERATED_POLICY, { source: 'generated.yaml' }),
      tools: GENERATED_TOOLS,
      approvalPorts: [port],
    });
    return { store, engine, local: localGovernor(engine) };
  };
  // What the reviewer of each approval of the run being played does, by call id (runs are played
  // one at a time).
  let reviewers = new Map<string, ReviewerAct>();
  const port = new CallbackApprovalPort((approval) => {
    const act = reviewers.get(approval.call_id) ?? 'none';
    if (act === 'approve' || act === 'twice') return { approved: true, reviewer: 'alice' };
    if (act === 'deny') return { approved: false, reviewer: 'bob', reason: 'no' };
    if (act === 'edit')
      return { approved: true, reviewer: 'eve', arguments: { ...(approval.arguments as object), amount: 1 } };
    return undefined; // none / late: nobody answers in time
  });
  let current = await open();
  let played = 0;
  // The run the framework started last (a framework that fails its invocation does not say).
  let lastRunId = '';
  // The governor of the current engine, noting each run it starts.
  const governor = new Proxy({} as Governor, {
    get(_target, name) {
      if (name === 'startRun')
        return async (...start: Parameters<Governor['startRun']>) => {
          const started = await current.local.startRun(...start);
          lastRunId = started.run_id;
          return started;
        };
      const value = (current.local as unknown as Record<string | symbol, unknown>)[name];
      return typeof value === 'function' ? value.bind(current.local) : value;
    },
  });

  /**
   * The state of one run as the framework plays it. `carries.bigint: false`: the framework
   * cannot carry a BigInt tool result (the AI SDK's `toJSONValue` throws on one), so the tool
   * returns that integer as a JavaScript number beyond 2^53 instead — still a value with no
   * canonical JSON form.
   */
  function runState(run: GeneratedRun, carries: { bigint?: boolean } = {}) {
    const steps = modelSteps(run);
    reviewers = new Map();
    for (const step of steps)
      for (const call of step) if (call.id) reviewers.set(call.id, call.call.reviewer);
    const sideEffects = new Map<string, number>();
    const results: Array<Array<{ call_id: string }>> = [];
    return {
      steps,
      results,
      sideEffects,
      /**
       * Runs a tool for real: bumps the side effect of `callId`, then acts as its generated call
       * says (found by the position its arguments name): returns, throws, hangs (given up on after
       * 1 ms, as a framework timeout would), or returns a value with no canonical JSON form.
       */
      async execute(callId: string, args: unknown): Promise<unknown> {
        sideEffects.set(callId, (sideEffects.get(callId) ?? 0) + 1);
        const index = indexOfArguments(args);
        const act: ToolAct = steps.flat().find((call) => call.index === index)?.call.act ?? 'succeed';
        if (act === 'throw') throw new Error('the tool failed');
        if (act === 'hang')
          await new Promise((_resolve, reject) =>
            setTimeout(() => reject(new Error('the tool hung and was given up on')), 1),
          );
        const result = resultOf(act, index) as Record<string, unknown>;
        if (carries.bigint === false && typeof result?.id === 'bigint') return { id: Number(result.id) };
        return result;
      },
      /**
       * Late and second answers (the framework is done: the approvals are no longer pending)
       * are refused and recorded; then `end` ends the run as the adapter does, and the run is
       * exported and checked from outside.
       */
      async check(
        runId: string,
        end: () => Promise<unknown>,
        tally?: Tally,
        options: { failed?: boolean } = {},
      ): Promise<void> {
        const { store, engine } = current;
        const records = await store.readRunRecords(runId);
        for (const record of records) {
          if (record.type !== 'approval-request') continue;
          const act = reviewers.get(record.call_id);
          if (act !== 'late' && act !== 'twice') continue;
          const answered = await engine
            .respondToApproval(record.approval_id, { approved: act === 'late', reviewer: 'mallory' })
            .then(
              () => 'accepted',
              (error: { kind?: string }) => error.kind,
            );
          if (answered !== 'conflict') throw new Error(`a ${act} answer was ${answered}, not a conflict`);
        }
        await end();
        const bundle = await engine.exportRun(runId);
        // A framework that failed its invocation made no next model request for the step it failed
        // in (nor any later one): only the steps the model heard back from are held to one result
        // per call.
        const steps = options.failed ? run.steps.slice(0, results.length) : run.steps;
        checkRun({ steps, results, sideEffects, bundle, publicKey: signer.verifierKey }, tally);
        if (++played % ENGINE_RUNS === 0) {
          await current.engine.close();
          current = await open();
        }
      },
    };
  }

  return {
    governor,
    /** The id of the run the framework started last. */
    lastRunId: () => lastRunId,
    runState,
    async close() {
      await current.engine.close();
    },
  };
}

export type AdapterWorld = Awaited<ReturnType<typeof adapterWorld>>;

/** A form of a generated call that a framework cannot carry, and what it is played as instead. */
export interface Inexpressible {
  /** Why the framework cannot carry it (reported with the pass's counts). */
  reason: string;
  applies(call: GeneratedCall): boolean;
  /** The nearest call the framework can carry. */
  instead(call: GeneratedCall): GeneratedCall;
}

/** Counts, by reason, of the generated calls played as their nearest expressible form. */
export class Rewrites {
  readonly counts = new Map<string, number>();
  constructor(readonly rules: readonly Inexpressible[]) {}

  /** `run` with every call a rule applies to replaced by its nearest expressible form. */
  apply(run: GeneratedRun): GeneratedRun {
    return {
      steps: run.steps.map((step) =>
        step.map((call) => {
          let current = call;
          for (const rule of this.rules) {
            if (!rule.applies(current)) continue;
            this.counts.set(rule.reason, (this.counts.get(rule.reason) ?? 0) + 1);
            current = rule.instead(current);
          }
          return current;
        }),
      ),
    };
  }

  toString(): string {
    return [...this.counts].map(([reason, count]) => `${count} × ${reason}`).join('; ') || 'none';
  }
}
