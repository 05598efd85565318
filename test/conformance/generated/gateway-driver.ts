// Drives generated runs through the MCP gateway: the SDK's real Client over Streamable HTTP, and a
// real upstream built with the SDK's McpServer (test/e2e/gateway/fidelity-upstream.mjs) over
// stdio, whose `bump` tool appends each call it runs to a counter file (the side effects, counted
// from outside). Each generated run is one client session, hence one callgate run; a step's calls
// are sent at once. Arguments the SDK cannot write (big integers' digits) go as raw JSON-RPC, with
// the id forms, batches and upstream answers the run's wire choices say (gateway-wire.ts), and
// what the client got for them is checked as it comes.
// One gateway and one upstream serve many runs (each with its own session and run id); the side
// effects are read as the counter file grows, never re-read from its start.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Engine } from '@callgate/core';
import { TEST_TOOLS, testEngine } from '@callgate/testing';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, ROOT, type ServedGateway, serveGateway } from '../../e2e/gateway/harness.js';
import { checkRun, type Tally } from './checks.js';
import { checkAnswers, idText, isJson, PLAIN_WIRE, type WireChoices } from './gateway-wire.js';
import {
  type GeneratedCall,
  type GeneratedRun,
  INEXACT_DECIMALS,
  type ReviewerAct,
  type ToolChoice,
} from './runs.js';

const UPSTREAM = resolve(ROOT, 'test/e2e/gateway/fidelity-upstream.mjs');

/**
 * How long the gateway waits for a reviewer, in ms; a `late` reviewer answers after
 * {@link LATE_ANSWER_MS}, once the wait is over (its answer is refused and recorded).
 */
const APPROVAL_WAIT_MS = 60;
const LATE_ANSWER_MS = 2 * APPROVAL_WAIT_MS;

/** The gateway's policy: `bump` allowed up to 1000, asked above; `echo` denied. */
const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: ${APPROVAL_WAIT_MS}ms, allow_edits: false }
rules:
  - id: small
    match: { tools: [bump] }
    when: args.amount <= 1000
    effect: allow
  - id: large
    match: { tools: [bump] }
    when: args.amount > 1000
    effect: ask
    reason: large bumps need a person
  - id: no-echo
    match: { tools: [echo] }
    effect: deny
`;

const TOOLS: Record<ToolChoice, string> = {
  read: 'bump',
  'pay-small': 'bump',
  'pay-large': 'bump',
  wipe: 'echo',
  unknown: 'format_disk',
};

/**
 * What the upstream does for a generated tool act (a hang is an answer that is not valid JSON: a
 * bare NaN or a key given twice, as the wire choices say).
 */
const actOf = (act: GeneratedCall['act'], wire: WireChoices): string =>
  act === 'hang' ? wire.invalid : { succeed: 'ok', throw: 'throw', 'non-canonical': 'surrogate' }[act];

/** A generated run as sent: what the client got for each step, the calls' tags, its run. */
export interface Driven {
  generated: GeneratedRun;
  results: Array<Array<{ call_id: string }>>;
  tags: string[];
  /** Tags of the decoy requests (sent twice under one id: refused, never run). */
  decoys: string[];
  runId: string;
}

/** A gateway in front of the fidelity upstream, shared by many generated runs. */
export class GatewayWorld {
  readonly #folder = mkdtempSync(join(tmpdir(), 'callgate-generated-'));
  readonly counter = join(this.#folder, 'side-effects.jsonl');
  readonly #reviewers = new Map<string, ReviewerAct>();
  /** Side effects by tag, and how far into the counter file they were read. */
  readonly #effects = new Map<string, number>();
  #read = 0;
  #partial = '';
  served!: ServedGateway;
  engine!: Engine;
  publicKey = '';

  async start(): Promise<void> {
    writeFileSync(this.counter, '');
    const made = await testEngine({ policy: POLICY, vault: true });
    for (const tool of TEST_TOOLS) made.engine.registry.remove(tool.name);
    this.engine = made.engine;
    this.publicKey = made.signer.verifierKey;
    this.served = await serveGateway({
      policy: POLICY,
      engine: this.engine,
      upstreams: [
        {
          name: 'fid',
          stdio: {
            command: process.execPath,
            args: [UPSTREAM],
            env: { CALLGATE_TEST_COUNTER: this.counter },
          },
          timeoutMs: 10_000,
        },
      ],
    });
    // Reviewers answer as the generated call says, found by the tag in its arguments.
    this.engine.onApproval((approval) => {
      if (approval.status !== 'pending') return;
      const tag = (approval.arguments as { tag?: string }).tag ?? '';
      const act = this.#reviewers.get(tag) ?? 'none';
      const respond = (approved: boolean, extra: object = {}) =>
        this.engine.respondToApproval(approval.id, { approved, reviewer: 'generated', ...extra });
      queueMicrotask(async () => {
        try {
          if (act === 'approve') await respond(true);
          else if (act === 'deny') await respond(false);
          else if (act === 'edit')
            await respond(true, { arguments: { ...(approval.arguments as object), amount: 1 } });
          else if (act === 'twice') {
            await respond(true);
            await respond(false).catch(() => undefined); // refused: recorded as a refusal
          } else if (act === 'late') {
            // After the wait limit: the approval has expired; the answer is refused and recorded.
            setTimeout(() => void respond(true).catch(() => undefined), LATE_ANSWER_MS);
          }
        } catch {
          // answered elsewhere first
        }
      });
    });
  }

  async close(): Promise<void> {
    await this.served?.close();
    rmSync(this.#folder, { recursive: true, force: true });
  }

  /**
   * Side effects by tag, from the counter file the upstream appends to (one JSON line per call
   * it ran): the lines added since the last look are read and counted, the rest kept.
   */
  sideEffects(): ReadonlyMap<string, number> {
    const file = openSync(this.counter, 'r');
    try {
      const chunk = Buffer.alloc(64 * 1024);
      for (;;) {
        const size = readSync(file, chunk, 0, chunk.length, this.#read);
        if (size === 0) break;
        this.#read += size;
        const lines = (this.#partial + chunk.toString('utf8', 0, size)).split('\n');
        this.#partial = lines.pop() ?? '';
        for (const line of lines) {
          if (!line) continue;
          const tag = (JSON.parse(line) as { tag?: string }).tag ?? '';
          this.#effects.set(tag, (this.#effects.get(tag) ?? 0) + 1);
        }
      }
    } finally {
      closeSync(file);
    }
    return this.#effects;
  }

  /** The arguments of a generated call as JSON-RPC params text (raw, for the digits), and the tag. */
  #arguments(
    call: GeneratedCall,
    run: number,
    index: number,
    wire: WireChoices,
  ): { raw: string; tag: string } {
    const tag = `r${run}c${index}`;
    const amount = call.tool === 'pay-large' ? 5000 + index : 10 + index;
    const big = call.act === 'succeed' && wire.bigResult ? { big: wire.bigResult } : {};
    const base = { tag, amount, act: actOf(call.act, wire), ...big };
    switch (call.arguments) {
      case 'json-text':
        return { raw: JSON.stringify(JSON.stringify(base)), tag };
      case 'invalid-text':
        return { raw: JSON.stringify(JSON.stringify(base).slice(0, -3)), tag };
      case 'huge-integer':
        return { raw: `${JSON.stringify(base).slice(0, -1)},"n":9007199254740993}`, tag };
      case 'inexact-decimal':
        return {
          raw: JSON.stringify(base).replace(
            `"amount":${amount}`,
            `"amount":${INEXACT_DECIMALS[index % INEXACT_DECIMALS.length]}`,
          ),
          tag,
        };
      case 'lone-surrogate':
        return { raw: JSON.stringify({ ...base, note: 'x\uD800y' }), tag };
      case 'nan':
        return { raw: JSON.stringify(base).replace(`"amount":${amount}`, '"amount":NaN'), tag };
      case 'missing':
        return { raw: '', tag };
      default:
        return { raw: JSON.stringify(base), tag };
    }
  }

  /** Runs one generated run as one client session and checks it. */
  async run(generated: GeneratedRun, number: number, tally?: Tally, wire = PLAIN_WIRE): Promise<void> {
    await this.check(await this.drive(generated, number, wire), tally);
  }

  /**
   * Sends one generated run as one client session, until its run has ended; throws when a raw
   * call's answer is not one answer with its id as sent (see `checkAnswers`).
   */
  async drive(generated: GeneratedRun, number: number, wire = PLAIN_WIRE): Promise<Driven> {
    const { client, transport } = await connectClient(this.served.url(), { name: `generated-${number}` });
    const sessionId = transport.sessionId as string;
    const results: Array<Array<{ call_id: string }>> = [];
    const tags: string[] = [];
    const decoys: string[] = [];
    let index = 0;
    for (const [stepIndex, step] of generated.steps.entries()) {
      const sent = step.map((call) => {
        const id = idText(wire, `r${number}c${index}`, index);
        const { raw, tag } = this.#arguments(call, number, index++, wire);
        this.#reviewers.set(tag, call.reviewer);
        tags.push(tag);
        return { call, raw, tag, id, text: this.#callText(TOOLS[call.tool], raw, id) };
      });
      // Text that is not JSON (a bare NaN in the arguments) would make the whole batch a parse
      // error: it goes alone, answered -32700 with id null.
      const raw = sent.filter(({ call, text }) => call.arguments !== 'object' && isJson(text));
      const batched = new Set(wire.batch ? raw : []);
      const batch =
        batched.size > 0 ? this.#batch(sessionId, raw, wire, `r${number}s${stepIndex}`, decoys) : undefined;
      const answers = await Promise.all(
        sent.map(async (item) => {
          const { call, raw, tag, id, text } = item;
          if (call.arguments === 'object') {
            const name = TOOLS[call.tool];
            const result = await client.callTool({ name, arguments: JSON.parse(raw) }, CallToolResultSchema);
            return { call_id: tag, result };
          }
          if (batched.has(item)) return { call_id: tag, result: await batch };
          const body = await this.#post(sessionId, text);
          checkAnswers(body, [isJson(text) ? id : 'null'], [], wire.bigResult);
          return { call_id: tag, result: body };
        }),
      );
      results.push(answers.map((answer) => ({ call_id: answer.call_id })));
    }
    await client.close();
    const runs = await this.engine.store.listRuns({ limit: 100 });
    const run = runs.find((item) => item.labels.client === `generated-${number}`);
    if (!run) throw new Error(`no run for session generated-${number}`);
    await waitFor(async () => (await this.engine.store.getRun(run.run_id))?.status !== 'running');
    return { generated, results, tags, decoys, runId: run.run_id };
  }

  /** Checks a driven run from outside: its bundle, the side effects of its calls, its results. */
  async check(driven: Driven, tally?: Tally): Promise<void> {
    const { generated, results, tags } = driven;
    const bundle = await this.engine.exportRun(driven.runId, { openings: true });
    const effects = this.sideEffects();
    // Side effects by the call id the gateway gave each call, found through the decided
    // arguments' openings (each call's arguments carry its tag).
    const tagOf = new Map<string, string>();
    for (const opening of bundle.openings ?? []) {
      const tag = (opening.value as { tag?: unknown } | null)?.tag;
      if (typeof tag === 'string') tagOf.set(opening.commitment, tag);
    }
    const callOfTag = new Map<string, string>();
    for (const record of bundle.records as Array<{
      type?: string;
      call_id?: string;
      arguments_commitment?: string | null;
    }>) {
      if (record.type !== 'call-decision' || !record.arguments_commitment) continue;
      const tag = tagOf.get(record.arguments_commitment);
      if (tag && record.call_id) callOfTag.set(tag, record.call_id);
    }
    for (const decoy of driven.decoys)
      if (effects.get(decoy)) throw new Error(`the decoy ${decoy}, sent twice under one id, ran`);
    const sideEffects = new Map<string, number>();
    for (const tag of tags) {
      const count = effects.get(tag) ?? 0;
      if (count > 0) sideEffects.set(callOfTag.get(tag) ?? `unmatched-${tag}`, count);
    }
    checkRun({ steps: generated.steps, results, sideEffects, bundle, publicKey: this.publicKey }, tally);
  }

  /** A tools/call as raw JSON-RPC text (the SDK writes numbers as doubles); `id` is raw JSON. */
  #callText(name: string, rawArguments: string, id: string): string {
    const params =
      rawArguments === ''
        ? `{"name":${JSON.stringify(name)}}`
        : `{"name":${JSON.stringify(name)},"arguments":${rawArguments}}`;
    return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`;
  }

  /**
   * Sends `calls` as one JSON-RPC batch with two decoy requests sharing an id (a `bump` that would
   * run if it reached the gate; its tag goes to `decoys`), checks that every call is answered
   * once and each decoy refused, and resolves with the body.
   */
  async #batch(
    sessionId: string,
    calls: Array<{ id: string; text: string }>,
    wire: WireChoices,
    name: string,
    decoys: string[],
  ): Promise<string> {
    const tag = `decoy-${name}`;
    decoys.push(tag);
    const id = idText(wire, tag, 100_000 + decoys.length);
    const decoy = this.#callText('bump', JSON.stringify({ tag, amount: 1, act: 'ok' }), id);
    const body = await this.#post(
      sessionId,
      `[${[decoy, ...calls.map((call) => call.text), decoy].join(',')}]`,
    );
    checkAnswers(
      body,
      calls.map((call) => call.id),
      [id],
      wire.bigResult,
    );
    return body;
  }

  /** POSTs raw JSON-RPC text over the session; resolves with the answer's body. */
  async #post(sessionId: string, text: string): Promise<string> {
    const response = await fetch(this.served.url(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: text,
    });
    return response.text();
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the run to end');
    await new Promise((wake) => setTimeout(wake, 10));
  }
}

/**
 * Generated runs in batches through a {@link GatewayWorld} that is replaced by a fresh one (new
 * engine and log, new gateway, new upstream process) every `runsPerWorld` runs: an export reads
 * every leaf of its log, so a log that grew over thousands of runs would make each later check
 * slower than the one before. The runs of a batch go at once, each in its own session.
 */
export class GatewayWorlds {
  readonly #runsPerWorld: number;
  #world?: GatewayWorld;
  #runs = 0;
  #number = 0;

  constructor(runsPerWorld = 250) {
    this.#runsPerWorld = runsPerWorld;
  }

  async #current(): Promise<GatewayWorld> {
    if (this.#world && this.#runs < this.#runsPerWorld) return this.#world;
    await this.#world?.close();
    this.#world = undefined;
    const world = new GatewayWorld();
    await world.start();
    this.#world = world;
    this.#runs = 0;
    return world;
  }

  /**
   * Sends the runs of `batch` at once, then checks each once all have ended (their exports then
   * share one signed checkpoint); throws the first violation found.
   */
  async run(
    batch: readonly GeneratedRun[],
    tally?: Tally,
    wires: readonly WireChoices[] = [],
  ): Promise<void> {
    const world = await this.#current();
    this.#runs += batch.length;
    const settled = await Promise.allSettled(
      batch.map((run, index) => world.drive(run, this.#number++, wires[index] ?? PLAIN_WIRE)),
    );
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    for (const result of settled) await world.check((result as PromiseFulfilledResult<Driven>).value, tally);
  }

  async close(): Promise<void> {
    await this.#world?.close();
    this.#world = undefined;
  }
}
