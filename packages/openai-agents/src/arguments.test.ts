// Generated argument texts (empty, blank, JSON objects, JSON that is not an object, text that is
// not JSON) for a tool callgate allows: callgate and the Agents SDK give each the same verdict.
// The run never stops for a call that needs no person; a call runs exactly when callgate recorded
// `allow`, and one that does not run is recorded refused (`deny`), never allowed. Node 22.
import { Agent, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conformanceWorld } from '../../../test/conformance/world.js';
import { createAgentsGate } from './index.js';

setTracingDisabled(true);

const argumentTexts = fc.oneof(
  fc.constantFrom('', ' ', '\n', '{}', '[]', 'null', '"text"', '{"path": ', '{path: "a"}', '{"path":"a"}'),
  fc.json(),
  fc.string({ maxLength: 12 }),
);

describe('@callgate/openai-agents argument texts (generated)', () => {
  it('gets one verdict from callgate and the SDK', async () => {
    await fc.assert(
      fc.asyncProperty(argumentTexts, async (text) => {
        const world = await conformanceWorld({});
        try {
          const gate = createAgentsGate({ governor: world.governor });
          const model = new ScriptedModel([
            [functionCall('read_file', text, { callId: 'c1' })],
            [assistantMessage('done')],
          ]);
          const readFile = gate.tool({
            name: 'read_file',
            description: 'Read a file.',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: [] } as never,
            strict: false,
            execute: async (input: unknown) => world.execute('read_file', input as Record<string, unknown>),
          });
          const agent = gate.agent(new Agent({ name: 'assistant', model, tools: [readFile] }));
          const context = await gate.begin();
          const result = await run(agent, 'go', { context, ...gate.runOptions() });
          expect(result.interruptions, 'no person is asked').toHaveLength(0);
          await gate.finish(result);
          const records = await world.records(gate.runIdOf(context));
          const decision = records.find((record) => record.type === 'call-decision');
          const end = records.find((record) => record.type === 'call-end');
          const ran = world.executions.length === 1;
          expect(decision?.effect, `${JSON.stringify(text)}: decided as it ran`).toBe(ran ? 'allow' : 'deny');
          expect(end?.outcome, `${JSON.stringify(text)}: ended as it ran`).toBe(ran ? 'ok' : 'denied');
        } finally {
          await world.close();
        }
      }),
      { numRuns: 30 },
    );
  });
});
