// The policy and tool specs the `callgate policy` command tests share (policy.test.ts,
// policy-replay.test.ts): reads allowed, invoices over 1,000 asked, untrusted destructive calls denied.
import type { ToolSpec } from '@callgate/core';

export const POLICY = `version: 1
default: deny
scrub: [force]
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: big-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
  - id: invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: untrusted-deletes
    match: { annotations: { destructiveHint: true } }
    when: provenance.untrusted
    effect: deny
`;

export const TOOLS: ToolSpec[] = [
  { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
  {
    name: 'send_invoice',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' }, force: { type: 'boolean' } },
    },
  },
];
