// An MCP client (standing in for an agent) talking to the tools of ./sandbox through callgate's
// gateway, as configured by callgate.yaml and policy.yaml beside this file.
//
//   node agent.mjs --url http://127.0.0.1:7420 --key <agent key>
//       against your running `callgate serve`: the write waits until YOU approve it in the
//       inbox (http://127.0.0.1:7420/ui/approvals, signed in with a reviewer key).
//   node agent.mjs
//       self-check, nothing to set up: starts `callgate serve --config callgate.yaml` on a free
//       port with a temporary data folder, makes an agent and a reviewer key, approves the write
//       through the HTTP API with the reviewer key (as a person would in the inbox), exports the
//       run with `callgate export --url`, verifies it with the key `callgate log-key show`
//       prints, and exits 1 when anything differs from what it expects.
//
// Works from any directory: every path is taken from this file's folder.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { answerWhenAsked, callgate, serverArguments, startServer } from '../support/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const given = serverArguments();
const problems = [];
const expect = (what, ok) => {
  if (!ok) problems.push(what);
};

/** The MCP result's text, and its refusal kind when callgate refused the call. */
function read(result) {
  const text = result.content?.map((part) => part.text ?? '').join('') ?? '';
  let kind;
  if (result.isError) {
    try {
      kind = JSON.parse(text).error?.kind;
    } catch {
      kind = 'tool-error';
    }
  }
  return { text, kind };
}

/** One printed line per call: the tool, what callgate did (from the result, never assumed), a detail. */
function report(tool, result, detail) {
  const outcome = result.kind ? `refused  ${result.kind}` : 'allowed ';
  console.log(`${tool.padEnd(16)} ${outcome} ${result.kind ? result.text.slice(0, 200) : detail}`);
}

/** The agent's steps; `approve(approvalId)` is called while the write waits, unless a person answers. */
async function agent(url, key, onWaiting) {
  const client = new Client({ name: 'gateway-example', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name).sort();
  console.log(`tools (profile observe): ${names.join(', ')}`);
  expect(
    `the observe profile's tools, got ${names}`,
    names.join() === 'list_directory,read_text_file,search_files,write_file',
  );

  const sandbox = join(here, 'sandbox');
  const listing = read(await client.callTool({ name: 'list_directory', arguments: { path: sandbox } }));
  report('list_directory', listing, listing.text.split('\n').filter(Boolean).join(', '));
  expect('list_directory is allowed', !listing.kind && listing.text.includes('notes.md'));

  const notes = read(
    await client.callTool({ name: 'read_text_file', arguments: { path: join(sandbox, 'notes.md') } }),
  );
  report('read_text_file', notes, notes.text.split('\n')[0]);
  expect('read_text_file is allowed', !notes.kind && notes.text.startsWith('# Notes'));

  const moved = read(
    await client.callTool({
      name: 'move_file',
      arguments: { source: join(sandbox, 'todo.txt'), destination: join(sandbox, 'x.txt') },
    }),
  );
  console.log(
    `move_file        ${moved.kind ? `refused  ${moved.kind} (not in the observe profile)` : 'allowed  — it should have been refused'}`,
  );
  expect(`move_file is refused as tool-not-found, got ${moved.kind}`, moved.kind === 'tool-not-found');

  const reply = join(sandbox, 'reply.md');
  console.log('write_file       asks     waiting for a person…');
  const waiting = onWaiting();
  const written = read(
    await client.callTool(
      { name: 'write_file', arguments: { path: reply, content: 'Thanks, noted.\n' } },
      undefined,
      { timeout: 6 * 60_000, resetTimeoutOnProgress: true },
    ),
  );
  await waiting;
  console.log(`write_file       ${written.kind ? `refused  ${written.kind}` : `approved ${written.text}`}`);
  await transport.terminateSession(); // ends the session, and with it the run
  await client.close();
  return written;
}

if (given) {
  const written = await agent(given.url, given.key, () => {
    console.log(`  approve or deny it at ${given.url}/ui/approvals (sign in with a reviewer key)`);
    return Promise.resolve();
  });
  console.log(
    written.kind ? 'the write was refused: nothing was written' : `wrote ${join(here, 'sandbox/reply.md')}`,
  );
  process.exit(0);
}

const server = await startServer(undefined, { config: join(here, 'callgate.yaml') });
const { dataDir } = server;
const replyPath = join(here, 'sandbox/reply.md');
try {
  console.log(`callgate serving ${server.url} (data ${dataDir})`);
  const readme = readFileSync(join(here, 'README.md'), 'utf8');
  const tools = /upstreams {2}files connected, (\d+) tools/.exec(server.output())?.[1];
  expect('the banner shows the upstream connected', tools !== undefined);
  // The README shows this banner: its tool count must be the upstream's.
  const documentedTools = /upstreams {2}files connected, (\d+) tools/.exec(readme)?.[1];
  expect(
    `README.md's banner says ${documentedTools} tools, the upstream has ${tools}`,
    documentedTools === tools,
  );
  let runId;
  const written = await agent(server.url, server.agentKey, async () => {
    const approval = await answerWhenAsked(server.url, server.reviewerKey, 'write_file', {
      reason: 'checked the content',
    });
    console.log(
      `                          approved by the reviewer key through POST /v1/approvals/${approval.id}/approve`,
    );
    runId = approval.run_id;
  });
  expect(`the approved write runs, got ${written.kind}`, !written.kind);
  expect(
    'the file holds exactly the approved content',
    existsSync(replyPath) && readFileSync(replyPath, 'utf8') === 'Thanks, noted.\n',
  );

  const bundle = join(dataDir, 'bundle.json');
  callgate(['export', '--url', server.url, '--key', server.reviewerKey, '--run', runId, '--out', bundle]);
  const logKey = server.logKey();
  const verified = callgate(['verify', bundle, '--public-key', logKey, '--strict']).trim();
  console.log(`\ncallgate verify (key ${logKey}):\n  ${verified}`);
  expect(`the bundle verifies, got ${verified}`, verified.startsWith('OK:'));
  // The README shows this run's output: its record count must be what a run really writes.
  const documented = /OK: (\d+) records/.exec(readme)?.[1];
  const recorded = /OK: (\d+) records/.exec(verified)?.[1];
  expect(`README.md's sample says ${documented} records, the run wrote ${recorded}`, documented === recorded);
  console.log(`\ncallgate runs show ${runId}:\n${callgate(['runs', 'show', runId, '--data', dataDir])}`);
} catch (error) {
  problems.push(String(error?.stack ?? error));
} finally {
  await server.stop();
  rmSync(replyPath, { force: true });
}
if (problems.length > 0) {
  console.error(`\ngateway example FAILED:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log(
  'gateway example OK: reads allowed, a tool outside the profile refused, the write ran once approved, the bundle verifies.',
);
