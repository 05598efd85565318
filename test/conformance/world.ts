// What every adapter's conformance run shares: the policy, the tools (their JSON Schemas and
// what they do), and an in-process engine on a MemoryStore whose approval port answers as the
// scenario's reviewer would.
import { CallgateClient, remoteGovernor } from '@callgate/client';
import {
  type ApprovalPort,
  CallbackApprovalPort,
  Engine,
  loadPolicy,
  MemoryStore,
  type ToolSpec,
} from '@callgate/core';
import { type ApprovalAnswerer, type Governor, localGovernor, localReviewer } from '@callgate/core/adapter';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey, verifyBundle } from '@callgate/core/ledger';
import type { LedgerRecord } from '@callgate/protocol';
import { createApiKey, createApp } from '@callgate/server';
import { IN_APP_REVIEWER, type Scenario } from './scenarios.js';

/** How an adapter reaches callgate: an engine in the same process, or a server over HTTP. */
export const MODES = ['in-process', 'remote'] as const;
export type Mode = (typeof MODES)[number];

export function conformancePolicy(approvalWait = '5s'): string {
  return `
version: 1
default: deny
approval: { ttl: 60s, wait: ${approvalWait}, allow_edits: false }
rules:
  - id: reads
    match: { tools: [read_file] }
    effect: allow
  - id: agents
    match: { tools: [researcher] }
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
  - id: no-deletes
    match: { tools: [delete_file] }
    effect: deny
    reason: deleting files is not allowed
`;
}

const objectOf = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The conformance tools: name, description and input JSON Schema. */
export const TOOLS: ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a text file.',
    inputSchema: objectOf({ path: { type: 'string' } }, ['path']),
  },
  {
    name: 'delete_file',
    description: 'Delete a file.',
    inputSchema: objectOf({ path: { type: 'string' } }, ['path']),
  },
  {
    name: 'send_invoice',
    description: 'Send an invoice.',
    inputSchema: objectOf({ to: { type: 'string' }, amount: { type: 'number' } }, ['to', 'amount']),
  },
  {
    name: 'researcher',
    description: 'Ask the research agent a question.',
    inputSchema: objectOf({ question: { type: 'string' } }, ['question']),
  },
];

/** What a conformance tool returns for `args` (`researcher` is an agent: the harness runs it). */
export function toolResult(tool: string, args: Record<string, unknown>): unknown {
  switch (tool) {
    case 'read_file':
      return `contents of ${String(args.path)}`;
    case 'delete_file':
      return `deleted ${String(args.path)}`;
    case 'send_invoice':
      return { sent: true, to: args.to, amount: args.amount };
    default:
      throw new Error(`no conformance tool ${tool}`);
  }
}

/** One execution of a conformance tool. */
export interface Execution {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * A fresh callgate for one scenario: an engine on a MemoryStore whose approval port answers as
 * the scenario's reviewer, and the Governor an adapter uses to reach it — `localGovernor`, or
 * (`remote`) `remoteGovernor` over a CallgateClient with an agent key, talking to the real server
 * app (`app.request`, no port).
 */
export async function conformanceWorld(
  scenario: Pick<Scenario, 'reviewer' | 'approvalWait'>,
  mode: Mode = 'in-process',
) {
  const store = new MemoryStore();
  const origin = 'conformance.test/log';
  const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin });
  const ports: ApprovalPort[] = [];
  if (scenario.reviewer === 'approve' || scenario.reviewer === 'deny') {
    const approved = scenario.reviewer === 'approve';
    ports.push(
      new CallbackApprovalPort(() => ({
        approved,
        reviewer: 'reviewer@conformance',
        reason: approved ? 'looks right' : 'not today',
      })),
    );
  }
  const engine = new Engine({
    store,
    ledger,
    policy: loadPolicy(conformancePolicy(scenario.approvalWait), { source: 'conformance-policy.yaml' }),
    approvalPorts: ports,
  });
  const executions: Execution[] = [];
  let governor: Governor;
  // Who answers `in-app` asks: the signed-in person's reviewer key (remote) or the engine.
  let reviewer: ApprovalAnswerer = localReviewer(engine, IN_APP_REVIEWER);
  if (mode === 'remote') {
    const app = createApp({ engine, publicKey: signer.verifierKey });
    const { key } = await createApiKey(store, { role: 'agent', name: 'conformance-agent' });
    const client = new CallgateClient({
      url: 'http://callgate.test',
      apiKey: key,
      fetch: (input, init) => Promise.resolve(app.request(String(input), init)),
    });
    governor = remoteGovernor(client);
    const reviewerKey = await createApiKey(store, { role: 'reviewer', name: IN_APP_REVIEWER });
    reviewer = new CallgateClient({
      url: 'http://callgate.test',
      apiKey: reviewerKey.key,
      fetch: (input, init) => Promise.resolve(app.request(String(input), init)),
    });
  } else {
    governor = localGovernor(engine);
  }
  return {
    engine,
    governor,
    reviewer,
    store,
    executions,
    /** Runs a conformance tool for real: recorded in `executions`. */
    execute(tool: string, args: Record<string, unknown>): unknown {
      executions.push({ tool, arguments: structuredClone(args) });
      return toolResult(tool, args);
    },
    /** The run's records, after checking its exported bundle verifies offline (strict). */
    async records(runId: string): Promise<LedgerRecord[]> {
      const bundle = await engine.exportRun(runId);
      const report = verifyBundle(JSON.parse(JSON.stringify(bundle)), { strict: true });
      if (!report.ok) throw new Error(`the run's bundle does not verify: ${JSON.stringify(report.failures)}`);
      return store.readRunRecords(runId);
    },
    async close() {
      await engine.close();
    },
  };
}

export type ConformanceWorld = Awaited<ReturnType<typeof conformanceWorld>>;
