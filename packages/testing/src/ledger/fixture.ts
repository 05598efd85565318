// Test helper: a realistic exported run, built with the real Ledger over a MemoryStore. Runs of
// other agents are interleaved with it, and checkpoints are signed along the way, so the bundle
// has non-trivial inclusion proofs, two checkpoints and a consistency proof.

import { MemoryStore } from '@callgate/core';
import { commit, digestOf, sha256 } from '@callgate/core/crypto';
import { Ledger, type LogSigner, logSignerFromPrivateKey, putPolicyDocument } from '@callgate/core/ledger';
import type { Bundle, RecordBody } from '@callgate/protocol';

/** The log origin of fixtures. */
export const FIXTURE_ORIGIN = 'callgate.test/log';
/** The run id of the fixture's exported run (a UUIDv7). */
export const FIXTURE_RUN_ID = '0190f5d2-7a1c-7b3e-9f00-0000000000aa';

/** A deterministic signer: the same key for the same `name` and `seed`. */
export function fixtureSigner(seed = 'callgate test log key', name = FIXTURE_ORIGIN): LogSigner {
  return logSignerFromPrivateKey(name, sha256(seed));
}

/** The policy document the fixture's decisions name. */
export const FIXTURE_POLICY = {
  version: 1,
  default: 'deny',
  fail_mode: 'closed',
  rules: [
    { id: 'reads', match: { tools: ['read_*'] }, effect: 'allow' },
    { id: 'large-invoices', match: { tools: ['send_invoice'] }, when: 'args.amount > 1000', effect: 'ask' },
    { id: 'no-untrusted-side-effects', match: { annotations: { destructiveHint: true } }, effect: 'deny' },
  ],
};

export interface BundleFixtureOptions {
  /** Checkpoint key (default {@link fixtureSigner}). */
  signer?: LogSigner;
  /** Rewrites the exported run's record bodies before they are appended (to script misbehaviour). */
  script?: (bodies: RecordBody[]) => RecordBody[];
  /** Include openings of the run's commitments (default true). */
  openings?: boolean;
  /**
   * One inclusion proof per record, `callgate-bundle/1` (default true: the format most tamper
   * tests take apart); false exports the default `callgate-bundle/3` (typed as `Bundle` all the
   * same: its `proofs` is then absent).
   */
  proofs?: boolean;
}

export interface BundleFixture {
  bundle: Bundle;
  signer: LogSigner;
  store: MemoryStore;
  /** Still open: more can be appended and exported. */
  ledger: Ledger;
  runId: string;
  policyDigest: string;
}

/** A fixed clock: 1 ms per reading from 2025-10-09T08:53:20Z. */
export function fixtureClock(start = 1_760_000_000_000): () => number {
  let now = start;
  return () => now++;
}

/** The bodies of the exported run: every record type, allow / ask / deny decisions. */
export function fixtureRunBodies(
  policyDigest: string,
  store: MemoryStore,
): { bodies: RecordBody[]; openings: Promise<void> } {
  let saltCounter = 0;
  const pending: Parameters<MemoryStore['putOpenings']>[0] = [];
  const committed = (value: unknown): string => {
    const opening = commit(value, sha256(`salt ${saltCounter++}`).subarray(0, 16));
    pending.push({ commitment: opening.commitment, salt: opening.salt, value });
    return opening.commitment;
  };
  const readArguments = { contract_id: 'C-1042' };
  const invoiceArguments = { customer: 'ACME GmbH', amount: 4200, currency: 'EUR' };
  const deleteArguments = { table: 'customers', where: 'all' };
  const call = (call_id: string, tool: string, value: unknown) => ({
    call_id,
    minted: false,
    tool,
    arguments_commitment: committed(value),
  });
  const bodies: RecordBody[] = [
    {
      type: 'run-start',
      principal: 'alice@example.com',
      framework: 'haystack',
      labels: { env: 'test', team: 'finance' },
    },
    { type: 'policy-snapshot', policy_digest: policyDigest },
    {
      type: 'model-message',
      role: 'assistant',
      content_commitment: committed('Let me read the contract.'),
      tool_calls: [call('call_1', 'read_contract', readArguments)],
    },
    {
      type: 'call-decision',
      call_id: 'call_1',
      minted: false,
      attempt: 1,
      tool: 'read_contract',
      arguments_digest: digestOf(readArguments),
      arguments_commitment: committed(readArguments),
      effect: 'allow',
      rules: ['reads'],
      reason: 'rule reads allows read_contract',
      policy_digest: policyDigest,
    },
    {
      type: 'call-end',
      call_id: 'call_1',
      attempt: 1,
      tool: 'read_contract',
      outcome: 'ok',
      arguments_digest: digestOf(readArguments),
      result_commitment: committed({ text: 'Net 30 days' }),
      duration_ms: 12.5,
      grant_consumed: false,
    },
    {
      type: 'model-message',
      role: 'assistant',
      content_commitment: null,
      tool_calls: [call('call_2', 'send_invoice', invoiceArguments)],
    },
    {
      type: 'call-decision',
      call_id: 'call_2',
      minted: false,
      attempt: 1,
      tool: 'send_invoice',
      arguments_digest: digestOf(invoiceArguments),
      arguments_commitment: committed(invoiceArguments),
      effect: 'ask',
      rules: ['large-invoices'],
      reason: 'invoices over 1000 need a person',
      policy_digest: policyDigest,
    },
    {
      type: 'approval-request',
      approval_id: 'apr_0001',
      call_id: 'call_2',
      tool: 'send_invoice',
      arguments_digest: digestOf(invoiceArguments),
      rules: ['large-invoices'],
      reason: 'invoices over 1000 need a person',
      expires_at: 1_760_000_300_000,
    },
    {
      type: 'approval-response',
      approval_id: 'apr_0001',
      call_id: 'call_2',
      status: 'approved',
      reviewer: 'bob@example.com',
      reason: null,
      edited: false,
      arguments_digest: digestOf(invoiceArguments),
    },
    {
      type: 'call-end',
      call_id: 'call_2',
      attempt: 1,
      tool: 'send_invoice',
      outcome: 'ok',
      arguments_digest: digestOf(invoiceArguments),
      result_commitment: committed({ invoice: 'INV-77' }),
      duration_ms: 230,
      grant_consumed: true,
    },
    {
      type: 'model-message',
      role: 'assistant',
      content_commitment: committed('Cleaning up.'),
      tool_calls: [
        {
          call_id: 'cg-5f2a9c',
          minted: true,
          tool: 'delete_records',
          arguments_commitment: committed(deleteArguments),
        },
      ],
    },
    {
      type: 'call-decision',
      call_id: 'cg-5f2a9c',
      minted: true,
      attempt: 1,
      tool: 'delete_records',
      arguments_digest: digestOf(deleteArguments),
      arguments_commitment: null,
      effect: 'deny',
      rules: ['no-untrusted-side-effects'],
      reason: 'destructive call with untrusted arguments',
      policy_digest: policyDigest,
      error_kind: 'policy-denied',
      provenance_untrusted: true,
    },
    {
      type: 'call-end',
      call_id: 'cg-5f2a9c',
      attempt: 1,
      tool: 'delete_records',
      outcome: 'denied',
      arguments_digest: digestOf(deleteArguments),
      result_commitment: null,
      error_kind: 'policy-denied',
      grant_consumed: false,
    },
    {
      type: 'gap',
      reason: 'engine unreachable, fail mode open',
      from_ts: 1_760_000_000_100,
      to_ts: 1_760_000_000_900,
      calls: 0,
    },
    {
      type: 'refusal',
      kind: 'approval-not-pending',
      actor: 'alice',
      call_id: 'call-2',
      approval_id: 'apr-0193a1',
      tool: 'send_invoice',
      reason: 'approval apr-0193a1 is no longer pending',
    },
    {
      type: 'effective-arguments',
      call_id: 'call_1',
      attempt: 1,
      tool: 'read_contract',
      arguments_digest: digestOf(readArguments),
      effective_arguments_digest: digestOf({ ...readArguments, tenant: 'acme' }),
      injected: ['tenant'],
    },
    {
      type: 'mcp-exchange',
      method: 'resources/read',
      upstream: 'contracts',
      target: 'file:///contracts/C-1042.pdf',
      params_commitment: committed({ uri: 'file:///contracts/C-1042.pdf' }),
      result_commitment: committed({ contents: [{ text: 'Net 30 days' }] }),
    },
    {
      type: 'model-message',
      role: 'assistant',
      content_commitment: committed('Invoice sent.'),
      tool_calls: [],
    },
    { type: 'run-end', status: 'completed', calls: 3 },
  ];
  return { bodies, openings: store.putOpenings(pending) };
}

/** The body of the `index`-th record of some other agent's run. */
function otherBody(index: number, policyDigest: string): RecordBody {
  if (index === 0) return { type: 'run-start', principal: 'svc-batch', framework: 'ai-sdk', labels: {} };
  return index % 2 === 1
    ? {
        type: 'model-message',
        role: 'user',
        content_commitment: `sha256:${sha256(`m${index}`).toString('hex')}`,
        tool_calls: [],
      }
    : { type: 'policy-snapshot', policy_digest: policyDigest };
}

/**
 * Builds a realistic exported run: {@link FIXTURE_RUN_ID} with every record type, interleaved
 * with two other runs, checkpoints signed every 10 records, a checkpoint after the run ended and
 * more records after it, then `exportRun` with openings.
 */
export async function buildBundleFixture(options: BundleFixtureOptions = {}): Promise<BundleFixture> {
  const signer = options.signer ?? fixtureSigner();
  const store = new MemoryStore();
  const ledger = await Ledger.open(store, {
    signer,
    origin: FIXTURE_ORIGIN,
    clock: fixtureClock(),
    checkpointEveryRecords: 10,
  });
  const policyDigest = await putPolicyDocument(store, FIXTURE_POLICY);
  const script = fixtureRunBodies(policyDigest, store);
  await script.openings;
  const bodies = options.script ? options.script(script.bodies) : script.bodies;
  const others = ['0190f5d2-7a1c-7b3e-9f00-0000000000b1', '0190f5d2-7a1c-7b3e-9f00-0000000000b2'];
  const counts = [0, 0];
  const next = (other: number): number => {
    const count = counts[other] ?? 0;
    counts[other] = count + 1;
    return count;
  };
  for (const [index, body] of bodies.entries()) {
    const other = index % 2;
    // The run's record and another run's record in the same tick: one group commit.
    await Promise.all([
      ledger.append(FIXTURE_RUN_ID, body),
      ledger.append(others[other] as string, otherBody(next(other), policyDigest)),
    ]);
  }
  await ledger.checkpoint();
  for (let i = 0; i < 5; i++) await ledger.append(others[0] as string, otherBody(next(0), policyDigest));
  // callgate-bundle/1 (one proof per record): the format most tamper tests take apart.
  const bundle = (await ledger.exportRun(FIXTURE_RUN_ID, {
    openings: options.openings ?? true,
    proofs: options.proofs ?? true,
  })) as Bundle;
  return { bundle, signer, store, ledger, runId: FIXTURE_RUN_ID, policyDigest };
}
