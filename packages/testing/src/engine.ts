// Test support: an engine on a MemoryStore with a fresh log key, the tools and policy the tests share.

import { type ApprovalPort, Engine, type EngineOptions, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
import type { ToolSpec } from '@callgate/protocol';

export const TEST_TOOLS: ToolSpec[] = [
  {
    name: 'read_file',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'send_invoice',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' }, force: { type: 'boolean' } },
      required: ['to', 'amount'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true },
    idempotencyKey: 'to',
  },
  {
    name: 'web_fetch',
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    trust: 'untrusted',
  },
  {
    name: 'delete_file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    annotations: { destructiveHint: true },
  },
];

export const TEST_POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 5s, allow_edits: false }
limits: { run: { max_calls: 20 }, tools: { send_invoice: { max_calls: 3 } } }
scrub: [force]
rules:
  - id: reads
    match: { tools: ["read_*", "web_fetch"] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
  - id: no-untrusted-side-effects
    match: { annotations: { destructiveHint: true } }
    when: provenance.untrusted
    effect: deny
    reason: arguments came from an untrusted tool
`;

/**
 * An engine on a fresh MemoryStore with a new log key for `origin`, built with `options` (besides
 * its store and ledger). The ledger stamps records with `ledgerClock` (epoch ms) when given.
 */
export async function memoryStoreEngine(
  origin: string,
  options: Omit<EngineOptions, 'store' | 'ledger'>,
  ledgerClock?: () => number,
) {
  const store = new MemoryStore();
  const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin, ...(ledgerClock ? { clock: ledgerClock } : {}) });
  return { engine: new Engine({ store, ledger, ...options }), store, ledger, signer };
}

/** {@link memoryStoreEngine} with the test tools and policy (or `policy`), and a run started. */
export async function testEngine(
  options: {
    policy?: string;
    ports?: ApprovalPort[];
    vault?: boolean;
    clock?: () => number;
  } & Partial<EngineOptions> = {},
) {
  const { engine, store, ledger, signer } = await memoryStoreEngine('test.local/log', {
    policy: loadPolicy(options.policy ?? TEST_POLICY, { source: 'test-policy.yaml' }),
    tools: TEST_TOOLS,
    approvalPorts: options.ports ?? [],
    ...(options.vault !== undefined ? { vault: options.vault } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.guardrails ? { guardrails: options.guardrails } : {}),
    ...(options.jsonLimits ? { jsonLimits: options.jsonLimits } : {}),
    ...(options.idleRunMs !== undefined ? { idleRunMs: options.idleRunMs } : {}),
  });
  const run = await engine.startRun({ principal: 'tester', framework: 'vitest' });
  return { engine, store, ledger, signer, run, runId: run.run_id };
}
