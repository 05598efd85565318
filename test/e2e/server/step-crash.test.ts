// A crash between steps, or inside one, loses nothing acknowledged: agents run steps that carry
// the previous step's outcomes and consume their grants (one request, one commit per step)
// against `callgate serve --synchronous FULL`, the server is killed with SIGKILL, and a server
// started again on the same data must hold every acknowledged decision and outcome. A decision
// is never durable without the outcomes it carried (they share its commit and come before it),
// and once the runs end every decided call has exactly one `call-end`.
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type ServerProcess, startCallgate } from './harness.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field
type Json = any;

const AGENTS = 3;
const STEPS_BEFORE_CRASH = 45;

interface Acknowledged {
  runId: string;
  /** Calls whose allowed, consumed decision the server answered, in step order. */
  decided: string[];
  /** Calls whose carried outcome the server answered as recorded. */
  ended: string[];
}

async function post(url: string, key: string, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, Json> };
}

/** One agent: steps of one read_file call each, each carrying the previous step's outcome. */
async function agent(
  server: ServerProcess,
  index: number,
  control: { steps: number; paused: boolean; idle: Set<number> },
): Promise<Acknowledged> {
  const key = server.keys.bot ?? '';
  const run = await post(`${server.url}/v1/runs`, key, { framework: 'crash' });
  const acknowledged: Acknowledged = { runId: run.json.run_id, decided: [], ended: [] };
  let previous: Array<Record<string, unknown>> = [];
  for (let step = 0; ; step++) {
    while (control.paused) {
      control.idle.add(index);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const callId = `a${index}-s${step}`;
    let answer: Awaited<ReturnType<typeof post>>;
    try {
      answer = await post(`${server.url}/v1/runs/${acknowledged.runId}/decisions`, key, {
        consume: true,
        calls: [{ id: callId, tool: 'read_file', arguments: { path: `/notes/${callId}` } }],
        outcomes: previous,
      });
    } catch {
      return acknowledged; // the server is gone
    }
    expect(answer.status).toBe(200);
    for (const item of answer.json.outcomes ?? []) {
      expect(item.outcome, JSON.stringify(item)).toBe('ok');
      acknowledged.ended.push(item.call_id);
    }
    expect(answer.json.verdicts[0]).toMatchObject({
      call_id: callId,
      status: 'allowed',
      grant_consumed: true,
    });
    acknowledged.decided.push(callId);
    control.steps += 1;
    previous = [{ call_id: callId, outcome: 'ok', result: `read ${callId}`, grant_consumed: true }];
  }
}

type Records = Array<Record<string, Json>>;

async function bundleOf(server: ServerProcess, runId: string): Promise<Records> {
  const response = await fetch(`${server.url}/v1/runs/${runId}/bundle`, {
    headers: { authorization: `Bearer ${server.keys.root}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { records: Records }).records;
}

describe('a crash of callgate serve (SIGKILL, synchronous FULL)', () => {
  it.each(['between steps', 'inside steps'] as const)(
    '%s loses no acknowledged decision or outcome, and every decided call ends once',
    async (when) => {
      const server = await startCallgate({
        keys: { bot: 'agent', root: 'admin' },
        arguments: ['--synchronous', 'FULL'],
      });
      let again: ServerProcess | undefined;
      try {
        const control = { steps: 0, paused: false, idle: new Set<number>() };
        const agents = Array.from({ length: AGENTS }, (_, index) => agent(server, index, control));
        while (control.steps < STEPS_BEFORE_CRASH) await new Promise((resolve) => setTimeout(resolve, 5));
        if (when === 'between steps') {
          control.paused = true; // every agent finishes its request in flight, then waits
          while (control.idle.size < AGENTS) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        server.signal('SIGUSR2'); // the watchdog kills the server with SIGKILL
        await server.exited;
        control.paused = false;
        const acknowledged = await Promise.all(agents);

        again = await startCallgate({ keys: {}, again: server });
        for (const { runId, decided, ended } of acknowledged) {
          const before = await bundleOf(again, runId);
          const decisions = before
            .filter((record) => record.type === 'call-decision')
            .map((record) => record.call_id);
          const ends = before.filter((record) => record.type === 'call-end');
          // Every acknowledged decision and outcome is there.
          expect(decisions.slice(0, decided.length)).toEqual(decided);
          expect(ends.map((record) => record.call_id).slice(0, ended.length)).toEqual(ended);
          // A durable decision of step n+1 came with step n's outcome, recorded before it.
          for (let step = 1; step < decisions.length; step++) {
            const end = before.findIndex(
              (record) => record.type === 'call-end' && record.call_id === decisions[step - 1],
            );
            const decision = before.findIndex(
              (record) => record.type === 'call-decision' && record.call_id === decisions[step],
            );
            expect(end, `call-end of ${decisions[step - 1]}`).toBeGreaterThan(-1);
            expect(end).toBeLessThan(decision);
            expect(before[end]).toMatchObject({ outcome: 'ok', grant_consumed: true });
          }

          const ending = await post(`${again.url}/v1/runs/${runId}/end`, again.keys.bot ?? '', {
            status: 'failed',
          });
          expect(ending.status).toBe(200);
          const after = await bundleOf(again, runId);
          const endsOf = (callId: string) =>
            after.filter((record) => record.type === 'call-end' && record.call_id === callId);
          for (const callId of decisions) expect(endsOf(callId), callId).toHaveLength(1);
          // At most the last decided call lost its outcome (it was never sent), and says so.
          const unfinished = decisions.filter((callId) => endsOf(callId)[0]?.outcome !== 'ok');
          expect(unfinished.length).toBeLessThanOrEqual(1);
          for (const callId of unfinished) expect(endsOf(callId)[0]?.outcome).toBe('decided-not-completed');
          const verified = await fetch(`${again.url}/v1/verify?strict=true`, {
            method: 'POST',
            headers: { authorization: `Bearer ${again.keys.root}`, 'content-type': 'application/json' },
            body: JSON.stringify(
              await (
                await fetch(`${again.url}/v1/runs/${runId}/bundle`, {
                  headers: { authorization: `Bearer ${again.keys.root}` },
                })
              ).json(),
            ),
          });
          expect(((await verified.json()) as { ok: boolean }).ok).toBe(true);
        }
      } finally {
        if (again) await again.stop();
        else {
          await server.stop();
          await rm(server.dir, { recursive: true, force: true });
        }
      }
    },
    120_000,
  );
});
