import type { ToolCall } from '@callgate/core';

/** One step of the scripted agent: what the model says and the calls it asks for. */
export interface ScriptStep {
  message: string;
  calls: ToolCall[];
}

/** What the demo expects of one call, checked against the verified bundle. */
export interface Expectation {
  step: number;
  tool: string;
  /** The model's call id, or undefined for the call the model gave no id (callgate mints one). */
  id: string | undefined;
  effect: 'allow' | 'deny' | 'ask';
  rule?: string;
  approval?: 'approved' | 'denied';
  outcome: 'ok' | 'error' | 'denied';
  errorKind?: string;
}

export const REPORT = '# Sandbox report\n\nnotes.txt and todo.txt were read; nothing was lost.\n';

/** The scripted agent: six steps covering every path of the gate. */
export const SCRIPT: ScriptStep[] = [
  {
    message: 'Let me look at the sandbox and read the notes.',
    calls: [
      { id: 'call-1', tool: 'list_files', arguments: { path: '.' } },
      { tool: 'read_file', arguments: '{"path": "notes.txt"}' },
      { id: 'call-3', tool: 'read_file', arguments: { path: 'todo.txt' } },
    ],
  },
  {
    message: 'I will write the report.',
    calls: [{ id: 'call-4', tool: 'write_file', arguments: '{"path": "report.md"}' }],
  },
  {
    message: 'Sorry, the content was missing. Writing the report again.',
    calls: [{ id: 'call-5', tool: 'write_file', arguments: { path: 'report.md', content: REPORT } }],
  },
  {
    message: 'The notes are no longer needed; deleting them.',
    calls: [{ id: 'call-6', tool: 'delete_file', arguments: { path: 'notes.txt' } }],
  },
  {
    message: 'Cleaning up the file next to the sandbox too.',
    calls: [{ id: 'call-7', tool: 'delete_file', arguments: { path: '../outside.txt' } }],
  },
  {
    message: 'Reading the archive.',
    calls: [{ id: 'call-8', tool: 'read_file', arguments: { path: 'archive.txt' } }],
  },
];

export const EXPECTED: Expectation[] = [
  { step: 1, tool: 'list_files', id: 'call-1', effect: 'allow', rule: 'reads', outcome: 'ok' },
  { step: 1, tool: 'read_file', id: undefined, effect: 'allow', rule: 'reads', outcome: 'ok' },
  { step: 1, tool: 'read_file', id: 'call-3', effect: 'allow', rule: 'reads', outcome: 'ok' },
  {
    step: 2,
    tool: 'write_file',
    id: 'call-4',
    effect: 'deny',
    outcome: 'denied',
    errorKind: 'tool-args-invalid',
  },
  {
    step: 3,
    tool: 'write_file',
    id: 'call-5',
    effect: 'ask',
    rule: 'writes-need-a-person',
    approval: 'approved',
    outcome: 'ok',
  },
  {
    step: 4,
    tool: 'delete_file',
    id: 'call-6',
    effect: 'ask',
    rule: 'deletes-need-a-person',
    approval: 'denied',
    outcome: 'denied',
    errorKind: 'approval-denied',
  },
  {
    step: 5,
    tool: 'delete_file',
    id: 'call-7',
    effect: 'deny',
    rule: 'deletes-outside-sandbox',
    outcome: 'denied',
    errorKind: 'policy-denied',
  },
  {
    step: 6,
    tool: 'read_file',
    id: 'call-8',
    effect: 'allow',
    rule: 'reads',
    outcome: 'error',
    errorKind: 'tool-error',
  },
];

/** The scripted reviewer: approves writes, denies deletes. */
export function scriptedAnswer(tool: string): { approved: boolean; reason: string } {
  return tool === 'write_file'
    ? { approved: true, reason: 'the report is what I asked for' }
    : { approved: false, reason: 'keep the notes' };
}
