import { type ApiKeyRow, canonicalJson, type RegisteredTool, type ToolSpec } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import { z } from 'zod';
import {
  decideResultSchema,
  decisionsBody,
  endedRunSchema,
  endRunBody,
  gapBody,
  listRunsQuery,
  messageBody,
  outcomeResultSchema,
  outcomesBody,
  runDetailSchema,
  runSchema,
  startRunBody,
} from '../http/schemas.js';
import type { ServerContext } from '../server-context.js';
import { defineRoute, type Route } from './define.js';
import { recordOutcomes, stepOutcomeResults } from './outcome-batch.js';

/**
 * `spec` as an agent key may register it: without the claims policy decisions rest on. Its
 * annotations go (MCP's defaults then apply: not read-only, destructive), and so does
 * `trust: trusted`, which would override the policy's `untrusted` list for the tool's output
 * (`trust: untrusted` only restricts the agent itself, so it stays).
 */
function asAgentSpec(spec: ToolSpec): ToolSpec {
  const { annotations: _, trust, ...rest } = spec;
  return trust === 'untrusted' ? { ...rest, trust } : rest;
}

/** The canonical text of each known spec, computed once (a known spec never changes). */
const knownSpecTexts = new WeakMap<ToolSpec, string>();

function knownSpecText(spec: ToolSpec): string {
  let text = knownSpecTexts.get(spec);
  if (text === undefined) {
    text = canonicalJson(spec);
    knownSpecTexts.set(spec, text);
  }
  return text;
}

/**
 * Registers the specs of tools the engine does not know yet. A known name must come with the
 * same spec: the server never overrides a tool. All specs are checked before any is added.
 *
 * Annotations (`readOnlyHint`, `destructiveHint`, ...) feed policy rules, so they are trusted
 * only from the server's configuration and admin keys: a spec an agent key registers loses them
 * (see {@link asAgentSpec}). An agent that sends a known spec again may send it exactly as the
 * server knows it (a configured tool's annotations included) or with the claims that were
 * stripped when it registered the tool: both compare equal.
 *
 * @throws CallgateError `conflict` for a known name with another spec, `request-invalid` for a
 *   spec whose input schema does not compile.
 */
function registerTools(server: ServerContext, key: ApiKeyRow, specs: readonly ToolSpec[]): ToolSpec[] {
  const registry = server.engine.registry;
  const trusted = key.role === 'admin';
  // Checked and compiled on the engine's own registry (no throwaway Ajv per request), added only
  // once every spec has passed.
  const fresh = new Map<string, RegisteredTool>();
  specs.forEach((sent, index) => {
    const spec = trusted ? sent : asAgentSpec(sent);
    const known = registry.get(spec.name);
    if (known) {
      const knownText = knownSpecText(known.spec);
      if (knownText !== canonicalJson(sent) && knownText !== canonicalJson(spec)) {
        throw new CallgateError(
          'conflict',
          `body.tools[${index}]: the server knows tool ${spec.name} with another spec; it never overrides a known tool`,
          {
            path: `body.tools[${index}]`,
          },
        );
      }
      return;
    }
    try {
      fresh.set(spec.name, registry.compile(spec));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new CallgateError('request-invalid', `body.tools[${index}]: ${message}`, {
        path: `body.tools[${index}]`,
      });
    }
  });
  const added = [...fresh.values()].filter((tool) => !registry.has(tool.spec.name));
  for (const tool of added) registry.addCompiled(tool);
  return added.map((tool) => tool.spec);
}

/** Routes of runs: start, list, get, end, a step's decisions, model messages and outcomes. */
export function runRoutes(server: ServerContext): Route[] {
  const { engine } = server;
  return [
    defineRoute({
      method: 'post',
      path: '/runs',
      operationId: 'startRun',
      summary: 'Start a run',
      roles: ['agent', 'admin'],
      body: startRunBody,
      status: 201,
      response: runSchema,
      errors: [403, 404],
      async handler({ body, key }) {
        const principal = server.principalFor(key, body.principal);
        if (body.parent_run_id) await server.runFor(key, body.parent_run_id);
        const run = await engine.startRun({
          principal,
          framework: body.framework,
          ...(body.labels ? { labels: body.labels } : {}),
          ...(body.parent_run_id ? { parent_run_id: body.parent_run_id } : {}),
        });
        await server.setOwner(run.run_id, key.name);
        return run;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs',
      operationId: 'listRuns',
      summary: 'List runs',
      roles: ['reviewer', 'admin'],
      query: listRunsQuery,
      response: z.object({ runs: z.array(runSchema) }),
      async handler({ query }) {
        const runs = await engine.store.listRuns({
          limit: query.limit ?? 50,
          ...(query.before !== undefined ? { before: query.before } : {}),
        });
        return { runs };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs/:id',
      operationId: 'getRun',
      summary: 'Read a run',
      roles: ['agent', 'reviewer', 'admin'],
      response: runDetailSchema,
      errors: [404],
      async handler({ params, key }) {
        const seen = await server.runFor(key, params.id ?? '');
        // Read again: the run may have ended meanwhile (runFor may answer from memory).
        const run = (await engine.store.getRun(seen.run_id)) ?? seen;
        const calls = (await engine.store.listCalls(run.run_id)).map(
          ({ idempotency_key: _, ...call }) => call,
        );
        return { run, calls };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/end',
      operationId: 'endRun',
      summary: 'End a run',
      roles: ['agent', 'admin'],
      body: endRunBody,
      response: endedRunSchema,
      errors: [404, 409],
      async handler({ params, key, body }) {
        const run = await server.runFor(key, params.id ?? '');
        if (run.status !== 'running')
          throw new CallgateError('conflict', `run ${run.run_id} already ended (${run.status})`);
        server.forgetRun(run.run_id);
        if (!body.outcomes) return engine.endRun(run.run_id, body.status ?? 'completed');
        const outcomes = await recordOutcomes(engine, run.run_id, body.outcomes, server.logger);
        return { ...(await engine.endRun(run.run_id, body.status ?? 'completed')), outcomes };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/decisions',
      operationId: 'decide',
      summary: 'Decide a step’s tool calls',
      roles: ['agent', 'admin'],
      body: decisionsBody,
      response: decideResultSchema,
      errors: [404, 409],
      async handler({ params, key, body }) {
        const run = await server.runFor(key, params.id ?? '');
        // Kept in the store too: a restarted server knows them before its first decision.
        if (body.tools) {
          await engine.restoreTools();
          await engine.rememberTools(registerTools(server, key, body.tools));
        }
        const consume = body.calls.map((call) => call.consume ?? body.consume ?? false);
        // The carried outcomes and the decisions (with their grants) share one commit.
        const step = await engine.decideStep(
          run.run_id,
          body.calls.map(({ consume: _, ...call }) => ({ ...call, arguments: call.arguments })),
          {
            ...(body.message ? { message: body.message } : {}),
            issueGrants: true,
            ...(consume.some(Boolean) ? { consumeGrants: consume } : {}),
            ...(body.outcomes ? { outcomes: body.outcomes } : {}),
          },
        );
        return {
          run_id: run.run_id,
          verdicts: step.verdicts,
          ...(body.outcomes ? { outcomes: stepOutcomeResults(step.outcomes, server.logger) } : {}),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/messages',
      operationId: 'recordMessage',
      summary: 'Record a model message',
      roles: ['agent', 'admin'],
      body: messageBody,
      status: 201,
      response: z.object({ recorded: z.literal(true) }),
      errors: [404, 409],
      async handler({ params, key, body }) {
        const run = await server.runFor(key, params.id ?? '');
        await engine.recordMessage(run.run_id, body);
        return { recorded: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/gaps',
      operationId: 'recordGap',
      summary:
        'Record an outage: calls that ran without a decision while the gate was unreachable (fail mode open)',
      roles: ['agent', 'admin'],
      body: gapBody,
      status: 201,
      response: z.object({ recorded: z.literal(true) }),
      errors: [404, 409],
      async handler({ params, key, body }) {
        const run = await server.runFor(key, params.id ?? '');
        await engine.recordGap(run.run_id, body);
        return { recorded: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/:id/outcomes',
      operationId: 'recordOutcome',
      summary: 'Record a call’s outcome, or several in order (`{ outcomes: [...] }`)',
      roles: ['agent', 'admin'],
      body: outcomesBody,
      response: z.union([
        z.object({ outcome: z.string() }),
        z.object({ outcomes: z.array(outcomeResultSchema) }),
      ]),
      errors: [404, 409],
      async handler({ params, key, body }) {
        const run = await server.runFor(key, params.id ?? '');
        if ('outcomes' in body)
          return { outcomes: await recordOutcomes(engine, run.run_id, body.outcomes, server.logger) };
        const outcome = await engine.recordOutcome(run.run_id, body);
        return { outcome };
      },
    }),
  ];
}
