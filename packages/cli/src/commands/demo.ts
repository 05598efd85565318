import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import {
  type Approval,
  type ApprovalResponse,
  CallbackApprovalPort,
  executeStep,
  formatDuration,
  type LedgerRecord,
  loadPolicy,
  replayPolicy,
  truncateText,
} from '@callgate/core';
import { serializeBundle, type TimelineEntry, timelineOf, verifyBundleBytes } from '@callgate/core/ledger';
import { openEmbedded } from '@callgate/store-sqlite';
import { DEMO_POLICY, DEMO_REPLAY_COUNTS, DEMO_STRICTER_POLICY } from '../demo/policy.js';
import { EXPECTED, type Expectation, REPORT, SCRIPT, scriptedAnswer } from '../demo/script.js';
import { formatTimeline } from '../demo/timeline.js';
import { DEMO_TOOLS, runDemoTool } from '../demo/tools.js';
import { count } from '../format.js';
import { formatReplay } from './policy-replay.js';

export interface DemoOptions {
  dir?: string;
  interactive?: boolean;
  synchronous?: 'NORMAL' | 'FULL';
  out: (line: string) => void;
}

/** How this CLI was started (`node …/bin.js`), so the commands the demo suggests work as printed. */
function cliInvocation(): string {
  const script = process.argv[1] ?? 'callgate';
  if (/callgate$/.test(script)) return 'callgate';
  const near = relative(process.cwd(), script);
  return `node ${near && !near.startsWith('..') ? near : resolve(script)}`;
}

let terminal: ReturnType<typeof createInterface> | undefined;
let inputEnded = false;

/** One line from standard input; `undefined` once input has ended (which counts as "no"). */
function ask(question: string): Promise<string | undefined> {
  if (!terminal) {
    terminal = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: process.stdin.isTTY === true,
    });
    terminal.on('close', () => {
      inputEnded = true;
    });
  }
  if (inputEnded) return Promise.resolve(undefined);
  const open = terminal;
  return new Promise((resolve) => {
    const onClose = () => resolve(undefined);
    open.once('close', onClose);
    open.question(question).then(
      (answer) => {
        open.off('close', onClose);
        resolve(answer);
      },
      () => resolve(undefined),
    );
  });
}

async function askPerson(approval: Approval): Promise<ApprovalResponse> {
  process.stdout.write(
    `\n[approval ${approval.id}] ${approval.tool} ${JSON.stringify(approval.arguments)}\n  rule: ${approval.rules.join(', ')} — ${approval.reason}\n`,
  );
  const left = formatDuration(approval.expires_at - Date.now());
  const answer = (await ask(`  Approve? [y/N] (${left} left, then it expires) `))?.trim().toLowerCase();
  if (answer !== undefined && Date.now() >= approval.expires_at) {
    process.stdout.write('  (too late: the approval has expired, the call is refused)\n');
  }
  if (answer === undefined) {
    process.stdout.write('\n  (end of input: denied)\n');
    return { approved: false, reviewer: 'terminal', reason: 'end of input' };
  }
  const reason = (await ask('  Reason: '))?.trim();
  return {
    approved: answer === 'y' || answer === 'yes',
    reviewer: 'terminal',
    ...(reason ? { reason } : {}),
  };
}

function check(rows: TimelineEntry[], expected: Expectation[]): string[] {
  const problems: string[] = [];
  if (rows.length !== expected.length)
    problems.push(`expected ${expected.length} calls in the ledger, found ${rows.length}`);
  expected.forEach((want, index) => {
    const row = rows[index];
    const name = `call ${index + 1} (${want.tool})`;
    if (!row) return;
    const got = {
      step: row.step,
      tool: row.tool,
      id: row.minted ? undefined : row.call_id,
      effect: row.effect,
      rule: row.rules[0],
      approval: row.approval?.status,
      outcome: row.outcome,
      errorKind: row.outcome === 'ok' ? undefined : (row.outcome_error_kind ?? row.error_kind),
    };
    for (const [key, value] of Object.entries(want)) {
      const actual = got[key as keyof typeof got];
      if (actual !== value) problems.push(`${name}: expected ${key} ${String(value)}, got ${String(actual)}`);
    }
    if (want.id === undefined && !(row.minted && /^cg-[0-9a-f]{16}$/.test(row.call_id))) {
      problems.push(`${name}: expected a minted cg-<hex> call id, got ${row.call_id}`);
    }
  });
  return problems;
}

/**
 * `callgate demo`: a scripted agent on real files under the embedded default (SQLite), then
 * export, offline verification and a timeline. Returns the process exit code (0 when every
 * call went as the script expects and the bundle verifies).
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const { out } = options;
  const root = options.dir ? resolve(options.dir) : await mkdtemp(join(tmpdir(), 'callgate-demo-'));
  const dataDir = join(root, 'data');
  const sandbox = join(root, 'sandbox');
  await mkdir(sandbox, { recursive: true });
  await writeFile(join(sandbox, 'notes.txt'), 'Call the bank on Monday.\n');
  await writeFile(join(sandbox, 'todo.txt'), '- write the report\n');
  await writeFile(join(root, 'outside.txt'), 'This file is outside the sandbox and must survive.\n');

  const answers = new Map<string, boolean>();
  const reviewer = new CallbackApprovalPort(
    async (approval) => {
      const response = options.interactive
        ? await askPerson(approval)
        : { ...scriptedAnswer(approval.tool), reviewer: 'scripted-reviewer' };
      answers.set(approval.call_id, response.approved);
      return response;
    },
    options.interactive ? 'terminal' : 'scripted-reviewer',
  );

  const embedded = await openEmbedded({
    dataDir,
    policy: loadPolicy(DEMO_POLICY, { source: 'demo-policy.yaml' }),
    tools: DEMO_TOOLS,
    approvalPorts: [reviewer],
    // The vault keeps the arguments, so the stricter policy can be replayed over the run at the end.
    vault: true,
    ...(options.synchronous ? { synchronous: options.synchronous } : {}),
  });
  out(`callgate demo — data ${dataDir} (SQLite, ${embedded.store.synchronous}), sandbox ${sandbox}`);
  const { engine } = embedded;
  let code = 0;
  try {
    const run = await engine.startRun({
      principal: 'demo-agent',
      framework: 'callgate-demo',
      labels: { story: 'sandbox' },
    });
    out(`run ${run.run_id}`);
    for (const [index, step] of SCRIPT.entries()) {
      out(`\nstep ${index + 1}: "${step.message}"`);
      const results = await executeStep(
        engine,
        run.run_id,
        step.calls,
        (call) => runDemoTool(sandbox, call),
        {
          message: { role: 'assistant', content: step.message },
        },
      );
      for (const result of results) {
        const summary = result.ok ? JSON.stringify(result.result) : JSON.stringify({ error: result.error });
        out(
          `  ${result.call_id} ${result.tool} → ${summary.length > 110 ? truncateText(summary, 109, '…') : summary}`,
        );
      }
    }
    await engine.endRun(run.run_id);

    const bundle = await engine.exportRun(run.run_id, {});
    const bundlePath = join(root, `run-${run.run_id}.bundle.json`);
    // The file `callgate export` writes (one record a line), verified from its bytes as
    // `callgate verify FILE` reads it.
    await writeFile(bundlePath, serializeBundle(bundle));
    const verdict = verifyBundleBytes(await readFile(bundlePath), {
      publicKey: embedded.verifierKey,
      strict: true,
    });
    if (!verdict.readable) throw new Error(`the exported bundle ${bundlePath} ${verdict.refusal}`);
    const report = verdict.report;
    const rows = timelineOf(bundle.records as never);
    out(`\ntimeline (from the exported bundle ${bundlePath}):\n${formatTimeline(rows)}`);
    out(
      `\nverification: ${report.ok ? 'OK' : 'FAILED'} — ${count(report.records, 'record')}, ${count(report.checkpoints, 'checkpoint')}, key ${embedded.verifierKey}`,
    );
    for (const failure of report.failures) out(`  ${failure.check}: ${failure.message}`);

    const expected = EXPECTED.map((want) => {
      const answer = want.approval && answers.get(want.id ?? '');
      if (!options.interactive || answer === undefined || !want.approval) return want;
      return answer
        ? { ...want, approval: 'approved' as const, outcome: 'ok' as const, errorKind: undefined }
        : { ...want, approval: 'denied' as const, outcome: 'denied' as const, errorKind: 'approval-denied' };
    }).map(
      (want) =>
        Object.fromEntries(Object.entries(want).filter(([, value]) => value !== undefined)) as Expectation,
    );
    const problems = check(rows, expected);

    // What a stricter policy would have decided for this same run (the vault's openings give the
    // arguments the gate decided on).
    const stricter = loadPolicy(DEMO_STRICTER_POLICY, { source: 'demo-stricter-policy.yaml' });
    const records = bundle.records as LedgerRecord[];
    const commitments = records.flatMap((record) =>
      record.type === 'call-decision' && record.arguments_commitment ? [record.arguments_commitment] : [],
    );
    const replay = replayPolicy(records, stricter, {
      openings: await embedded.store.getOpenings(commitments),
      tools: (name) => DEMO_TOOLS.find((tool) => tool.name === name),
    });
    const stricterPath = join(root, 'stricter-policy.yaml');
    await writeFile(stricterPath, DEMO_STRICTER_POLICY);
    const toolsPath = join(root, 'tools.json');
    await writeFile(toolsPath, `${JSON.stringify(DEMO_TOOLS, null, 2)}\n`);
    out(`\nreplaying a stricter policy (${stricterPath}) over this run:`);
    for (const line of formatReplay(replay)) out(line === '' ? '' : `  ${line}`);
    out(
      `  replay it yourself: ${cliInvocation()} policy replay --policy ${stricterPath} --tools ${toolsPath} --data ${dataDir}`,
    );
    for (const [change, count] of Object.entries(DEMO_REPLAY_COUNTS)) {
      const found = replay.counts[change as keyof typeof DEMO_REPLAY_COUNTS];
      if (found !== count) problems.push(`replay: expected ${count} calls ${change}, found ${found}`);
    }
    const report5 = expected.find((want) => want.id === 'call-5');
    const files = {
      report: await readFile(join(sandbox, 'report.md'), 'utf8').catch(() => undefined),
      notes: await readFile(join(sandbox, 'notes.txt'), 'utf8').catch(() => undefined),
      outside: await readFile(join(root, 'outside.txt'), 'utf8').catch(() => undefined),
    };
    if (report5?.outcome === 'ok' && files.report !== REPORT)
      problems.push('sandbox: report.md was not written as approved');
    if (report5?.outcome !== 'ok' && files.report !== undefined)
      problems.push('sandbox: report.md exists though the write was refused');
    const deleteApproved = expected.find((want) => want.id === 'call-6')?.outcome === 'ok';
    if (!deleteApproved && files.notes === undefined)
      problems.push('sandbox: notes.txt was deleted though the delete was refused');
    if (files.outside === undefined) problems.push('outside.txt was deleted: a denied call ran');
    if (!report.ok) problems.push('the exported bundle does not verify');
    if (problems.length > 0) {
      out('\nDEMO FAILED: the run differs from the script:');
      for (const problem of problems) out(`  - ${problem}`);
      code = 1;
    } else {
      out(`\ndemo OK: ${rows.length} calls decided, every refusal held, the bundle verifies offline.`);
      out(
        `  verify it yourself: ${cliInvocation()} verify ${bundlePath} --public-key '${embedded.verifierKey}' --strict`,
      );
    }
  } finally {
    terminal?.close();
    await embedded.close();
  }
  return code;
}
