// What the server-backed examples share: a `callgate serve` of their own (when no --url is
// given), a reviewer that answers through the HTTP API, standing in for the person at the
// inbox, and the check of what the run printed and recorded (`serverExample`). Every path is taken from this file's folder, so the examples run from any directory.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CallgateClient } from '@callgate/client';
import { verifyBundle } from '@callgate/core/ledger';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../packages/cli/dist/bin.js');
// The `node` on PATH runs the command (the Node its SQLite module was built for), whichever Node
// runs the example (the AI SDK and Agents SDK examples need Node 22).
const NODE = process.env.CALLGATE_NODE ?? 'node';

/** `callgate ARGS` to completion; its standard output. */
export function callgate(args) {
  return execFileSync(NODE, [CLI, ...args], { encoding: 'utf8' });
}

/** `--url URL --key KEY` (a running server, a person answers in its inbox) or neither (self-check). */
export function serverArguments() {
  const { values } = parseArgs({ options: { url: { type: 'string' }, key: { type: 'string' } } });
  if (values.url && !values.key) {
    console.error(
      '--key <agent key> is needed with --url (callgate keys create --role agent --name my-agent)',
    );
    process.exit(2);
  }
  return values.url ? { url: values.url, key: values.key } : undefined;
}

/**
 * Starts `callgate serve` on a free port with a temporary data folder, with an agent and a
 * reviewer key: `--policy` with `policy` (YAML text), or `--config` with the file `config`.
 * Resolves with `{ url, agentKey, reviewerKey, dataDir, output(), logKey(), stop() }`; `stop()`
 * stops it and removes the folder.
 */
export async function startServer(policy, { config } = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-example-server-'));
  const data = join(folder, 'data');
  const source = config ? ['--config', config] : ['--policy', join(folder, 'policy.yaml')];
  if (!config) writeFileSync(join(folder, 'policy.yaml'), policy);
  const keyOf = (role, name) =>
    /\b(cg_[A-Za-z0-9_-]{43})\b/.exec(
      callgate(['keys', 'create', '--role', role, '--name', name, '--data', data]),
    )?.[1];
  const agentKey = keyOf('agent', 'example-agent');
  const reviewerKey = keyOf('reviewer', 'example-reviewer');
  const child = spawn(NODE, [CLI, 'serve', ...source, '--data', data, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`callgate serve did not start:\n${output}`)), 30_000);
    const read = (chunk) => {
      output += chunk;
      const found = /callgate serving (http:\S+)/.exec(output)?.[1];
      if (found && output.includes('Press Ctrl+C to stop.')) {
        clearTimeout(timer);
        ready(found);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', () => fail(new Error(`callgate serve exited:\n${output}`)));
  });
  return {
    url,
    agentKey,
    reviewerKey,
    dataDir: data,
    output: () => output,
    logKey: () => callgate(['log-key', 'show', '--data', data]).trim(),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Answers the first pending approval of `tool` through `POST /v1/approvals/{id}/approve|deny`
 * with a reviewer key, as a person would in the inbox. Resolves with the approval answered.
 */
export async function answerWhenAsked(url, reviewerKey, tool, { approve = true, reason } = {}) {
  const headers = { authorization: `Bearer ${reviewerKey}`, 'content-type': 'application/json' };
  for (let attempt = 0; attempt < 600; attempt++) {
    const { approvals } = await (await fetch(`${url}/v1/approvals?status=pending`, { headers })).json();
    const pending = approvals.find((approval) => approval.tool === tool);
    if (pending) {
      const answered = await fetch(`${url}/v1/approvals/${pending.id}/${approve ? 'approve' : 'deny'}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(reason ? { reason } : {}),
      });
      if (!answered.ok)
        throw new Error(`answering ${pending.id} failed: ${answered.status} ${await answered.text()}`);
      return (await answered.json()).approval;
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
  throw new Error(`no ${tool} approval was asked for within 60 s`);
}

/** Exits 1 naming what was expected when `printed` holds other lines than `expected` (in any order). */
export function expectPrinted(printed, expected) {
  if (JSON.stringify([...printed].sort()) !== JSON.stringify([...expected].sort())) {
    console.error(`\nexample FAILED: expected\n${expected.join('\n')}`);
    process.exit(1);
  }
  console.log('\nexample OK');
}

/** The lines every server-backed example prints when it checks itself. */
export const SELF_CHECK_LINES = [
  'read invoices.txt',
  'send_invoice approved by example-reviewer (through the API)',
  'sent an invoice of 5000 to acme',
  'model: Invoice sent.',
  'ledger: verified against callgate log-key show',
];

/**
 * Where a server-backed example talks to: the server of `--url` and `--key`, or (without them)
 * one it starts with the policy file `policyUrl` (`new URL('policy.yaml', import.meta.url)`).
 * Returns `{ own, url, agentKey }`; `own` (its own server, to stop) is undefined with `--url`.
 */
export async function exampleServer(policyUrl) {
  const given = serverArguments();
  if (given) return { own: undefined, url: given.url, agentKey: given.key };
  const own = await startServer(readFileSync(fileURLToPath(policyUrl), 'utf8'));
  return { own, url: own.url, agentKey: own.agentKey };
}

/** A `say` that prints a line and keeps it, and the lines it kept. */
export function transcript() {
  const printed = [];
  return {
    printed,
    say(line) {
      printed.push(line);
      console.log(line);
    },
  };
}

/**
 * The frame of a server-backed example, around the framework's own code: the server of `--url`
 * and `--key` or one of its own (see {@link exampleServer}), a client of it with the agent key,
 * and `say` (prints a line and keeps it). `runExample(agent)` calls `agent()`, which runs the agent and
 * resolves with its callgate run id. Meanwhile, on its own server, a reviewer approves
 * `send_invoice` through the API; then the run's bundle is exported and verified against the log
 * key (`callgate log-key show`), the server stops, and the example exits 1 unless it printed
 * {@link SELF_CHECK_LINES}. With `--url`, it says where to approve, and how to export the run.
 */
export async function serverExample(policyUrl) {
  const { own, url, agentKey } = await exampleServer(policyUrl);
  const client = new CallgateClient({ url, apiKey: agentKey });
  const { printed, say } = transcript();
  async function runExample(agent) {
    let problem;
    try {
      if (!own) console.log(`send_invoice will wait: approve or deny it at ${url}/ui/approvals`);
      const reviewing = own
        ? answerWhenAsked(url, own.reviewerKey, 'send_invoice', { reason: 'matches the order' }).then(
            (approval) => say(`send_invoice ${approval.status} by ${approval.reviewer} (through the API)`),
          )
        : Promise.resolve();
      const runId = await agent();
      await reviewing;
      if (own) {
        const report = verifyBundle(await client.exportRun(runId), { publicKey: own.logKey(), strict: true });
        say(`ledger: ${report.ok ? 'verified' : 'NOT verified'} against callgate log-key show`);
      } else {
        console.log(`callgate run ${runId}: callgate export --url ${url} --key <key> --run ${runId}`);
      }
    } catch (error) {
      problem = error;
    } finally {
      await own?.stop();
    }
    if (problem) throw problem;
    if (own) expectPrinted(printed, SELF_CHECK_LINES);
  }
  return { url, client, say, runExample };
}
