import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { timelineOf } from '@callgate/core';
import { openLedger } from '@callgate/store-sqlite';
import { formatTimeline } from '../demo/timeline.js';

function requireDataDir(dataDir: string): void {
  if (!existsSync(join(dataDir, 'callgate.db'))) {
    throw new Error(
      `no callgate data in ${dataDir} (looked for callgate.db); pass --data DIR or set CALLGATE_DATA`,
    );
  }
}

/** `callgate export --run ID`: writes the run's bundle to a file or standard output. */
export async function runExport(
  dataDir: string,
  options: { run: string; out?: string; openings?: boolean; print: (text: string) => void },
): Promise<number> {
  requireDataDir(dataDir);
  const { store, ledger } = await openLedger(dataDir);
  try {
    if (!(await store.getRun(options.run))) {
      options.print(`callgate export: no run ${options.run} in ${dataDir}`);
      return 1;
    }
    const bundle = await ledger.exportRun(options.run, { openings: options.openings ?? false });
    const text = `${JSON.stringify(bundle, null, 2)}\n`;
    if (options.out) {
      await writeFile(options.out, text);
      options.print(
        `wrote ${options.out}: ${bundle.records.length} records, verifier key ${bundle.public_key}`,
      );
    } else {
      options.print(text.trimEnd());
    }
    return 0;
  } finally {
    await ledger.close();
    await store.close();
  }
}

/** `callgate runs list`: newest first. */
export async function runRunsList(
  dataDir: string,
  options: { limit: number; print: (text: string) => void },
) {
  requireDataDir(dataDir);
  const { store, ledger } = await openLedger(dataDir);
  try {
    const runs = await store.listRuns({ limit: options.limit });
    if (runs.length === 0) options.print('no runs');
    for (const run of runs) {
      const started = new Date(run.started_at).toISOString();
      options.print(`${run.run_id}  ${run.status.padEnd(9)} ${started}  ${run.framework}  ${run.principal}`);
    }
    return 0;
  } finally {
    await ledger.close();
    await store.close();
  }
}

/** `callgate runs show ID`: the run's timeline from its records. */
export async function runRunsShow(
  dataDir: string,
  runId: string,
  print: (text: string) => void,
): Promise<number> {
  requireDataDir(dataDir);
  const { store, ledger } = await openLedger(dataDir);
  try {
    const run = await store.getRun(runId);
    if (!run) {
      print(`callgate runs show: no run ${runId} in ${dataDir}`);
      return 1;
    }
    print(`run ${run.run_id} — ${run.status}, ${run.framework}, principal ${run.principal}`);
    print(formatTimeline(timelineOf(await store.readRunRecords(runId))));
    return 0;
  } finally {
    await ledger.close();
    await store.close();
  }
}
