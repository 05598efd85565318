import { accessSync, constants } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { timelineOf } from '@callgate/core';
import { openDataDir, openLedger } from '@callgate/store-sqlite';
import { formatTimeline } from '../demo/timeline.js';

/**
 * Checks that `dataDir` holds callgate data the user may read.
 * @throws Error naming the folder and what is wrong (missing, or no permission).
 */
function requireDataDir(dataDir: string): void {
  const database = join(dataDir, 'callgate.db');
  try {
    accessSync(database, constants.R_OK | constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new Error(`no permission to open ${database}; run as the user that owns the data folder`);
    }
    throw new Error(
      `no callgate data in ${dataDir} (looked for callgate.db); pass --data DIR or set CALLGATE_DATA`,
    );
  }
}

/**
 * `callgate export --run ID`: writes the run's bundle to a file or standard output:
 * `callgate-bundle/2` (one batch inclusion proof), or with `--proofs` `callgate-bundle/1` (one
 * RFC 9162 inclusion proof per record, for verifiers that read only version 1). Exporting
 * signs a fresh checkpoint, so it takes the data folder's writer lock: while a server runs on the
 * folder, export through its API (`GET /v1/runs/{id}/bundle`).
 */
export async function runExport(
  dataDir: string,
  options: {
    run: string;
    out?: string;
    openings?: boolean;
    /** One inclusion proof per record (`callgate-bundle/1`) instead of one batch proof (`callgate-bundle/2`). */
    proofs?: boolean;
    print: (text: string) => void;
    warn: (text: string) => void;
  },
): Promise<number> {
  requireDataDir(dataDir);
  const opened = await openLedger(dataDir, undefined, 'callgate export');
  try {
    if (!(await opened.store.getRun(options.run))) {
      options.warn(`callgate export: no run ${options.run} in ${dataDir}`);
      return 1;
    }
    const bundle = await opened.ledger.exportRun(options.run, {
      openings: options.openings ?? false,
      proofs: options.proofs ?? false,
    });
    if (options.openings && (bundle.openings?.length ?? 0) === 0) {
      options.warn(
        'warning: no openings were found: the vault was off when this run was recorded (vault: true in callgate.yaml)',
      );
    }
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
    await opened.close();
  }
}

/** `callgate runs list`: newest first. Reads only, so it works beside a running server. */
export async function runRunsList(
  dataDir: string,
  options: { limit: number; print: (text: string) => void },
) {
  requireDataDir(dataDir);
  const { store } = openDataDir(dataDir);
  try {
    const runs = await store.listRuns({ limit: options.limit });
    if (runs.length === 0) options.print('no runs');
    for (const run of runs) {
      const started = new Date(run.started_at).toISOString();
      options.print(`${run.run_id}  ${run.status.padEnd(9)} ${started}  ${run.framework}  ${run.principal}`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** `callgate runs show ID`: the run's timeline from its records. Reads only. */
export async function runRunsShow(
  dataDir: string,
  runId: string,
  print: (text: string) => void,
): Promise<number> {
  requireDataDir(dataDir);
  const { store } = openDataDir(dataDir);
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
    await store.close();
  }
}
