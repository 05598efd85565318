// `callgate policy replay` through the command line parser, on real files and a real SQLite data
// folder.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicy } from '@callgate/core';
import { openEmbedded } from '@callgate/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callgate } from '../test-support.js';
import { POLICY, TOOLS } from './policy-fixture.js';
import { runPolicyReplay } from './policy-replay.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callgate-policy-replay-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('callgate policy replay', () => {
  let dataDir: string;
  let runId: string;
  let verifierKey: string;
  const stricter = `version: 1
default: deny
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: all-invoices-ask
    match: { tools: [send_invoice] }
    effect: ask
`;

  beforeAll(async () => {
    dataDir = join(dir, 'data');
    const embedded = await openEmbedded({ dataDir, policy: loadPolicy(POLICY), tools: TOOLS, vault: true });
    const run = await embedded.engine.startRun({ principal: 'bot', framework: 'test' });
    runId = run.run_id;
    verifierKey = embedded.verifierKey;
    await embedded.engine.decide(runId, [
      { id: 'r1', tool: 'read_file', arguments: { path: 'a' } },
      { id: 'i1', tool: 'send_invoice', arguments: { to: 'acme', amount: 10 } },
      { id: 'i2', tool: 'send_invoice', arguments: { to: 'acme', amount: 9000 } },
    ]);
    await embedded.engine.endRun(runId);
    const bundle = await embedded.engine.exportRun(runId, { openings: true });
    await writeFile(join(dir, 'run.bundle.json'), JSON.stringify(bundle));
    const withoutOpenings = await embedded.engine.exportRun(runId, {});
    await writeFile(join(dir, 'committed.bundle.json'), JSON.stringify(withoutOpenings));
    await embedded.close();
    await writeFile(join(dir, 'stricter.yaml'), stricter);
  });

  it('prints the diff table and counts from the data folder', async () => {
    const result = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--data',
      dataDir,
    ]);
    const text = result.lines.join('\n');
    expect(result.code).toBe(0);
    expect(text).toMatch(/i1\s+send_invoice\s+allow \(invoices\)\s+ask \(all-invoices-ask\)\s+stricter/);
    expect(text).toMatch(/i2\s+send_invoice\s+ask \(big-invoices\)\s+ask \(all-invoices-ask\)\s+same/);
    expect(text).toContain(
      '3 calls: same 2 · stricter 1 · more permissive 0 · not replayable 0 · refused by gate 0',
    );
    const failing = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--data',
      dataDir,
      '--fail-on',
      'stricter',
    ]);
    expect(failing.code).toBe(1);
  });

  it('replays a bundle as JSON, and reports committed-only arguments as not replayable', async () => {
    const json = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--bundle',
      join(dir, 'run.bundle.json'),
      '--json',
    ]);
    const report = JSON.parse(json.output.join('\n'));
    expect(report.counts).toMatchObject({ same: 2, stricter: 1 });
    expect(report.calls[1]).toMatchObject({ call_id: 'i1', change: 'stricter', run_id: runId });
    const committed = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--bundle',
      join(dir, 'committed.bundle.json'),
      '--json',
    ]);
    const blind = JSON.parse(committed.output.join('\n'));
    // The unpinned key is said on the error channel, beside the JSON, not in it.
    expect(committed.errors.join('\n')).toMatch(/not a pinned one; pass --public-key/);
    expect(blind.counts['not-replayable']).toBe(3);
    expect(blind.calls.every((call: { replayed?: unknown }) => call.replayed === undefined)).toBe(true);
  });

  it('names the runs a bundle holds when asked for one it does not hold (runs list reads no bundle)', async () => {
    const missing = '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51';
    const absent = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--bundle',
      join(dir, 'run.bundle.json'),
      '--runs',
      missing,
    ]);
    expect(absent.code).toBe(1);
    const text = absent.lines.join('\n');
    expect(text).toContain(`no run ${missing} in ${join(dir, 'run.bundle.json')} (it holds run ${runId})`);
    expect(text).not.toContain('runs list');
  });

  it('refuses a tools file number a double does not hold, quoting it as written', async () => {
    const tools = join(dir, 'inexact-tools.yaml');
    await writeFile(
      tools,
      '- name: send_invoice\n  inputSchema: { type: object, properties: { amount: { type: number, maximum: 1000.00000000000001 } } }\n',
    );
    const refused = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--bundle',
      join(dir, 'run.bundle.json'),
      '--tools',
      tools,
    ]);
    expect(refused.code).toBe(2);
    expect(refused.lines.join('\n')).toContain(
      `${tools}: line 2, column 79: [0].inputSchema.properties.amount.maximum: the number 1000.00000000000001 has digits a double does not hold`,
    );
  });

  it('refuses to replay a bundle that does not verify (an edited decision is no record of one)', async () => {
    const bundle = JSON.parse(await readFile(join(dir, 'run.bundle.json'), 'utf8'));
    const decision = bundle.records.find((record: { type: string }) => record.type === 'call-decision');
    decision.effect = decision.effect === 'deny' ? 'allow' : 'deny';
    await writeFile(join(dir, 'edited.bundle.json'), JSON.stringify(bundle));
    const edited = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--bundle',
      join(dir, 'edited.bundle.json'),
    ]);
    expect(edited.code).toBe(2);
    expect(edited.lines.join('\n')).toMatch(/does not verify/);
  });

  it('replays rules on annotations only with the tool specs (--tools), never guessing them', async () => {
    const byHint = join(dir, 'by-hint.yaml');
    await writeFile(
      byHint,
      'version: 1\nrules:\n  - id: read-only\n    match: { annotations: { readOnlyHint: true } }\n    effect: allow\n',
    );
    const blind = await callgate(['policy', 'replay', '--policy', byHint, '--data', dataDir, '--json']);
    const unknown = JSON.parse(blind.lines.join('\n'));
    expect(unknown.counts['not-replayable']).toBe(3);
    expect(unknown.calls[0].note).toContain('rule "read-only" matches annotations');
    const toolsFile = join(dir, 'tools.yaml');
    await writeFile(
      toolsFile,
      '- name: read_file\n  inputSchema: { type: object }\n  annotations: { readOnlyHint: true }\n- name: send_invoice\n  inputSchema: { type: object }\n',
    );
    const seen = await callgate([
      'policy',
      'replay',
      '--policy',
      byHint,
      '--data',
      dataDir,
      '--tools',
      toolsFile,
      '--json',
    ]);
    const known = JSON.parse(seen.lines.join('\n'));
    expect(known.calls.map((call: { change: string }) => call.change)).toEqual([
      'same',
      'stricter',
      'stricter',
    ]);
    expect(known.calls[1]).toMatchObject({ call_id: 'i1', replayed: { effect: 'deny' } });
  });

  it('selects runs with --runs and --since', async () => {
    const none = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--data',
      dataDir,
      '--runs',
      'no-such-run',
      '--json',
    ]);
    // Not a run id: a usage error, nothing replayed.
    expect(none.code).toBe(2);
    expect(none.lines.join('')).toContain("argument 'no-such-run' is invalid");
    const missing = '019a0c4e-7d2b-7c3a-9f10-2b6f0e8d4a51';
    const absent = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--data',
      dataDir,
      '--runs',
      missing,
    ]);
    // A run that is not there is a failure the help names (exit 1), not an empty replay.
    expect(absent.code).toBe(1);
    expect(absent.lines.join('\n')).toContain(`no run ${missing} in ${dataDir}`);
    const since = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--data',
      dataDir,
      '--since',
      '1h',
      '--json',
    ]);
    expect(JSON.parse(since.lines.join('\n')).calls).toHaveLength(3);
    const future = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--data',
      dataDir,
      '--since',
      '2999-01-01',
      '--json',
    ]);
    expect(JSON.parse(future.lines.join('\n')).calls).toEqual([]);
    const bad = await callgate([
      'policy',
      'replay',
      '--policy',
      join(dir, 'stricter.yaml'),
      '--since',
      'yesterday',
    ]);
    expect(bad.code).not.toBe(0);
  });

  it('holds its options to one source, and verifies a bundle with the key pinned when given', async () => {
    const other = await openEmbedded({
      dataDir: join(dir, 'other-log'),
      policy: loadPolicy(POLICY),
      tools: TOOLS,
    });
    const otherKey = other.verifierKey;
    await other.close();
    const bundle = join(dir, 'run.bundle.json');
    const stricter = join(dir, 'stricter.yaml');
    const rows: Array<{ args: string[]; code: number; says?: RegExp }> = [
      {
        args: ['--bundle', bundle, '--data', dataDir],
        code: 2,
        says: /option '--bundle <file>' cannot be used with option '--data <dir>'/,
      },
      {
        args: ['--data', dataDir, '--public-key', verifierKey],
        code: 2,
        says: /option '--public-key <key>' needs option '--bundle <file>'/,
      },
      {
        args: ['--data', dataDir, '--config', 'callgate.yaml', '--tools', 'tools.yaml'],
        code: 2,
        says: /option '--config <file>' cannot be used with option '--tools <file>'/,
      },
      { args: ['--bundle', bundle, '--public-key', verifierKey], code: 0, says: /3 calls: same 2/ },
      { args: ['--bundle', bundle, '--public-key', otherKey], code: 2, says: /does not verify/ },
      {
        args: ['--bundle', bundle, '--public-key', 'not-a-key'],
        code: 2,
        says: /--public-key is not a verifier key/,
      },
      { args: ['--bundle', bundle], code: 0, says: /3 calls: same 2/ },
      { args: ['--data', dataDir], code: 0, says: /3 calls: same 2/ },
    ];
    for (const row of rows) {
      const result = await callgate(['policy', 'replay', '--policy', stricter, ...row.args]);
      expect({ args: row.args, code: result.code }).toEqual({ args: row.args, code: row.code });
      if (row.says) expect(result.lines.join('\n')).toMatch(row.says);
    }
    // Without a pinned key it says so, beside the replay (not in it: standard output may be JSON).
    for (const publicKey of [undefined, verifierKey]) {
      const warnings: string[] = [];
      const code = await runPolicyReplay({
        policy: stricter,
        bundle,
        data: dataDir,
        json: true,
        ...(publicKey ? { publicKey } : {}),
        print: () => {},
        warn: (line) => warnings.push(line),
      });
      expect(code).toBe(0);
      expect(warnings.join('\n')).toMatch(publicKey ? /^$/ : /not a pinned one; pass --public-key/);
    }
  });
});
