// `callgate policy replay --policy NEW.yaml`: what a new policy would have decided for every past
// call, beside what was decided, from a data folder (records and vault) or an exported bundle.
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  firstInexactNumber,
  isCallgateError,
  type LedgerRecord,
  loadPolicy,
  type ReplayChange,
  type ReplayReport,
  type ReplayTool,
  replayPolicy,
  type ToolSpec,
} from '@callgate/core';
import { parseBundleText, parseVerifierKey, verifyBundleBytes } from '@callgate/core/ledger';
import { type AnyBundle, type Opening, toolSpecSchema } from '@callgate/protocol';
import { readServerConfig } from '@callgate/server';
import { openDataDir } from '@callgate/store-sqlite';
import { LineCounter, parseDocument } from 'yaml';
import { readBundleInput } from './verify-input.js';

const toolSpecListSchema = toolSpecSchema.array();

/** Options of {@link runPolicyReplay}. */
export interface PolicyReplayOptions {
  policy: string;
  /** Replay these runs only. */
  runs?: string[];
  /** Replay runs started at or after this epoch ms. */
  since?: number;
  bundle?: string;
  /** The log's verifier key (`name+id+key`) the bundle's checkpoints must be signed with. */
  publicKey?: string;
  data: string;
  /** A `callgate.yaml` whose tools give the annotations the ledger does not record. */
  config?: string;
  /** A YAML or JSON file holding a list of tool specs (the same use as `config`'s tools). */
  tools?: string;
  json?: boolean;
  /** Exit 1 when any call's change is one of these. */
  failOn?: ReplayChange[];
  print: (line: string) => void;
  /** Where errors and warnings go (standard error: standard output may be JSON). */
  warn: (line: string) => void;
}

const LABELS: Record<ReplayChange, string> = {
  same: 'same',
  stricter: 'stricter',
  'more-permissive': 'more permissive',
  'not-replayable': 'not replayable',
  'refused-by-gate': 'refused by gate',
};

const decisionText = (effect: string, rules: readonly string[]) =>
  rules.length === 0 ? effect : `${effect} (${rules.join(', ')})`;

/** The diff table of a replay, with its counts, as lines for a terminal. */
export function formatReplay(report: ReplayReport): string[] {
  const header = ['run', 'call', 'tool', 'recorded', 'new policy', 'change'];
  const rows = report.calls.map((call) => [
    call.run_id.slice(0, 13),
    call.attempt > 1 ? `${call.call_id}#${call.attempt}` : call.call_id,
    call.tool,
    decisionText(call.recorded.effect, call.recorded.rules),
    call.replayed ? decisionText(call.replayed.effect, call.replayed.rules) : '—',
    LABELS[call.change] + (call.note ? `: ${call.note}` : ''),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] as number)))
      .join('  ');
  const counts = (Object.keys(LABELS) as ReplayChange[])
    .map((change) => `${LABELS[change]} ${report.counts[change]}`)
    .join(' · ');
  return [line(header), ...rows.map(line), '', `${report.calls.length} calls: ${counts}`];
}

/**
 * Reads the records and openings of a bundle file (any `callgate-bundle/` version), verified as
 * `callgate verify` does (every line read losslessly and held to its canonical text), with the
 * log's key pinned when `publicKey` is given.
 */
async function fromBundle(file: string, publicKey: string | undefined) {
  // Read as callgate verify reads a bundle: bounded (MAX_BUNDLE_BYTES), `-` standard input.
  const input = await readBundleInput(file);
  if ('problem' in input) throw new Error(`the bundle ${file} ${input.problem}`);
  const text = input.bytes;
  if (publicKey !== undefined)
    try {
      parseVerifierKey(publicKey);
    } catch (error) {
      throw new Error(`--public-key is not a verifier key (name+id+key): ${(error as Error).message}`);
    }
  // Replay compares with what was recorded: a bundle that does not verify says nothing reliable
  // (and one that does holds records of a known version, each checked against its schema).
  // Read by the verifier's one input rule (as callgate verify and POST /v1/verify read a bundle).
  const verdict = verifyBundleBytes(text, publicKey !== undefined ? { publicKey } : {});
  if (!verdict.readable) throw new Error(`${file} is not a bundle: it ${verdict.refusal}`);
  const report = verdict.report;
  if (!report.ok)
    throw new Error(
      `${file} does not verify (${report.failures.length} failed check${report.failures.length === 1 ? '' : 's'}; first: ${report.failures[0]?.check}: ${report.failures[0]?.message}): see callgate verify ${file}`,
    );
  const bundle = parseBundleText(text.toString('utf8')).bundle as AnyBundle;
  return { records: bundle.records as LedgerRecord[], openings: bundle.openings ?? [] };
}

/**
 * Reads the data folder's records (only those of the runs asked for, when `--runs` or `--since`
 * narrows them) and the vault's openings of the decisions' arguments.
 */
async function fromDataDir(dataDir: string, options: Pick<PolicyReplayOptions, 'runs' | 'since'>) {
  const { store } = openDataDir(dataDir);
  try {
    let records: LedgerRecord[];
    if (options.runs) {
      records = [];
      for (const runId of options.runs) records.push(...(await store.readRunRecords(runId)));
    } else if (options.since !== undefined) {
      records = [];
      // Runs newest first, a page at a time, until they start before `since`. A page ends inside
      // its last millisecond, so the next one starts at that millisecond again (runs seen are skipped).
      const seen = new Set<string>();
      let before: number | undefined;
      for (;;) {
        const page = await store.listRuns({ limit: 500, ...(before !== undefined ? { before } : {}) });
        const fresh = page.filter((run) => !seen.has(run.run_id));
        for (const run of fresh) {
          seen.add(run.run_id);
          if (run.started_at >= options.since) records.push(...(await store.readRunRecords(run.run_id)));
        }
        const last = page.at(-1);
        if (page.length < 500 || fresh.length === 0 || !last || last.started_at < options.since) break;
        before = last.started_at + 1;
      }
      records.sort((a, b) => a.seq - b.seq);
    } else records = await store.readRecords(0, await store.ledgerSize());
    const commitments = records.flatMap((record) =>
      record.type === 'call-decision' && record.arguments_commitment ? [record.arguments_commitment] : [],
    );
    const openings: Opening[] = commitments.length === 0 ? [] : await store.getOpenings(commitments);
    return { records, openings };
  } finally {
    await store.close();
  }
}

function selectRuns(records: readonly LedgerRecord[], options: PolicyReplayOptions): LedgerRecord[] {
  if (!options.runs && options.since === undefined) return [...records];
  const chosen = new Set<string>();
  for (const record of records) {
    if (record.type !== 'run-start') continue;
    if (options.runs && !options.runs.includes(record.run_id)) continue;
    if (options.since !== undefined && record.ts < options.since) continue;
    chosen.add(record.run_id);
  }
  return records.filter((record) => chosen.has(record.run_id));
}

/**
 * `callgate policy replay`: loads the new policy, reads past records (a bundle's, or the data
 * folder's with its vault), replays every decision and prints the diff table (or JSON).
 *
 * @returns 0 (1 when `failOn` names a change that occurred, or a run of `runs` is not there), 2 for
 *   unreadable input.
 */
export async function runPolicyReplay(options: PolicyReplayOptions): Promise<number> {
  const { print } = options;
  let report: ReplayReport;
  try {
    const policyText = await readFile(options.policy, 'utf8').catch((error: Error) => {
      throw new Error(`cannot read the policy ${options.policy}: ${error.message}`);
    });
    const policy = loadPolicy(policyText, { source: options.policy });
    const tools = new Map<string, ReplayTool>();
    const specs: ToolSpec[] = [];
    if (options.config) specs.push(...(await readServerConfig(options.config, process.env)).tools);
    if (options.tools) {
      const file = options.tools;
      const text = await readFile(file, 'utf8').catch((error: Error) => {
        throw new Error(`cannot read the tools ${file}: ${error.message}`);
      });
      let value: unknown;
      try {
        value = readToolsYaml(text);
      } catch (error) {
        if (error instanceof InexactNumber) throw new Error(`${file}: ${error.message}`);
        throw new Error(
          `${file} is not valid YAML: ${((error as Error).message.split('\n')[0] ?? '').replace(/:$/, '')}`,
        );
      }
      const listed = toolSpecListSchema.safeParse(value);
      if (!listed.success) {
        const issue = listed.error.issues[0];
        const at = (issue?.path ?? [])
          .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
          .join('');
        throw new Error(
          `${file}: expected a list of tool specs: ${at.replace(/^\./, '') || '(the file)'}: ${issue?.message}`,
        );
      }
      specs.push(...listed.data);
    }
    for (const spec of specs)
      tools.set(spec.name, {
        ...(spec.annotations ? { annotations: spec.annotations } : {}),
        ...(spec.trust ? { trust: spec.trust } : {}),
      });
    if (!options.bundle)
      await access(join(options.data, 'callgate.db')).catch(() => {
        throw new Error(
          `no callgate data in ${options.data} (looked for callgate.db); pass --data DIR or --bundle FILE`,
        );
      });
    const source = options.bundle
      ? await fromBundle(options.bundle, options.publicKey)
      : await fromDataDir(options.data, options);
    if (options.bundle && options.publicKey === undefined)
      options.warn(
        `callgate policy replay: warning: ${options.bundle} was verified against the public key it carries, not a pinned one; pass --public-key to pin the log's key`,
      );
    const records = selectRuns(source.records, options);
    const found = new Set(records.flatMap((record) => (record.type === 'run-start' ? [record.run_id] : [])));
    const missing = options.runs?.filter((id) => !found.has(id)) ?? [];
    if (missing.length > 0) {
      // `runs list` reads a data folder, not a bundle: for a bundle, name the runs it holds.
      const held = options.bundle ? heldRuns(source.records) : '(callgate runs list shows the runs there)';
      options.warn(
        `callgate policy replay: no run ${missing.join(', ')} in ${options.bundle ?? options.data} ${held}`,
      );
      return 1;
    }
    report = replayPolicy(records, policy, {
      openings: source.openings,
      ...(tools.size > 0 ? { tools: (name: string) => tools.get(name) } : {}),
    });
  } catch (error) {
    const message = isCallgateError(error) ? error.message : (error as Error).message;
    options.warn(`callgate policy replay: ${message}`);
    return 2;
  }
  if (options.json) print(JSON.stringify(report, null, 2));
  else {
    print(`replaying policy ${report.policy_digest} over ${report.calls.length} past calls`);
    for (const line of formatReplay(report)) print(line);
  }
  return options.failOn?.some((change) => report.counts[change] > 0) ? 1 : 0;
}

/** The runs a bundle holds, for a message: `(it holds runs A, B)`, at most 10 named. */
function heldRuns(records: readonly { type: string; run_id?: string }[]): string {
  const ids = [
    ...new Set(
      records.flatMap((record) => (record.type === 'run-start' && record.run_id ? [record.run_id] : [])),
    ),
  ];
  if (ids.length === 0) return '(it holds no run)';
  const named = ids.slice(0, 10).join(', ');
  return `(it holds ${ids.length === 1 ? 'run' : 'runs'} ${named}${ids.length > 10 ? `, and ${ids.length - 10} more` : ''})`;
}

/** A number of a tools file that a double does not hold. */
class InexactNumber extends Error {}

/**
 * A tools file's value, its numbers judged as written (a schema's `maximum: 1000.00000000000001`
 * is refused, never rounded to 1000).
 * @throws InexactNumber saying `line L, column C: PATH: why` for a number a double does not hold, or the
 *   `yaml` package's error for text that is not one YAML document.
 */
function readToolsYaml(text: string): unknown {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const problem = document.errors[0];
  if (problem) throw problem;
  const inexact = firstInexactNumber(document);
  if (inexact) {
    const { line, col } = lineCounter.linePos(inexact.offset);
    const path = inexact.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
    throw new InexactNumber(`line ${line}, column ${col}: ${path.replace(/^\./, '')}: ${inexact.problem}`);
  }
  return document.toJS({ maxAliasCount: 100 });
}
