import { writeFile } from 'node:fs/promises';
import { CallgateClient, isCallgateError } from '@callgate/client';
import { bundleKeys, serializeBundle, timelineOf } from '@callgate/core/ledger';
import type { AnyBundle } from '@callgate/protocol';
import { openDataDir, openLedger } from '@callgate/store-sqlite';
import { formatTimeline } from '../demo/timeline.js';
import { exitCodeOfKind, refusalLine } from '../exit-codes.js';
import { count, table } from '../format.js';
import { requireDataDir } from './data-folder.js';
import { DEFAULT_SERVER_URL, readServerAddress } from './server-address.js';

/** What `callgate export` writes and where; `url` (and `key`) export through a running server. */
export interface ExportOptions {
  run: string;
  out?: string;
  openings?: boolean;
  /** One inclusion proof per record (`callgate-bundle/1`) instead of one batch proof and a signed manifest (`callgate-bundle/3`). */
  proofs?: boolean;
  /** Reveal the run's key so an auditor holding the arguments can check the keyed digests (implied by `openings`). */
  revealRunKeys?: boolean;
  /** A running server's base URL: export through `GET /v1/runs/{id}/bundle` instead of the data folder. */
  url?: string;
  /** The API key for `url` (any role may export the runs it may read). */
  key?: string;
  print: (text: string) => void;
  warn: (text: string) => void;
}

async function writeBundle(bundle: AnyBundle, options: ExportOptions): Promise<void> {
  if (options.openings && (bundle.openings?.length ?? 0) === 0) {
    options.warn(
      'warning: no openings were found: the vault was off when this run was recorded (vault: true in callgate.yaml)',
    );
  }
  const text = serializeBundle(bundle);
  if (options.out) {
    const out = options.out;
    await writeFile(out, text).catch((error: Error) => {
      throw new Error(`export: cannot write ${out}: ${error.message}`);
    });
    const keys = bundleKeys(bundle);
    options.print(
      `wrote ${options.out}: ${count(bundle.records.length, 'record')}, verifier key ${keys.pin}`,
    );
    // After a key rotation the key to pin is not the log's current key: say which signed what.
    if (keys.pin !== keys.current || keys.signers.some((key) => key !== keys.current))
      options.print(
        `  its checkpoints are signed by ${keys.signers.join(' and ') || 'no key of the bundle'}; the log's current key is ${keys.current}, reached from ${keys.pin} through the bundle's key rotations: pin ${keys.pin} (callgate verify --public-key)`,
      );
  } else {
    options.print(text.trimEnd());
  }
}

/** The command that exports through a running server, for messages. */
export function exportThroughServer(run: string, url = DEFAULT_SERVER_URL): string {
  return `callgate export --url ${url} --key <API key> --run ${run}   (GET ${url}/v1/runs/${run}/bundle)`;
}

/**
 * `callgate export --run ID`: writes the run's bundle to a file or standard output:
 * `callgate-bundle/3` (one batch inclusion proof, a signed manifest, one record a line), or with `proofs` `callgate-bundle/1` (one
 * RFC 9162 inclusion proof per record, for verifiers that read only version 1). With `url`
 * it asks that running server for it; otherwise it reads the data folder, which signs a fresh
 * checkpoint and so takes the folder's writer lock: while a server runs on the folder, the
 * message names the `--url` form.
 */
export async function runExport(dataDir: string, options: ExportOptions): Promise<number> {
  if (options.url) {
    const client = new CallgateClient({ url: options.url, ...(options.key ? { apiKey: options.key } : {}) });
    try {
      await writeBundle(
        await client.exportRun(options.run, {
          openings: options.openings ?? false,
          proofs: options.proofs ?? false,
          ...(options.revealRunKeys ? { revealRunKeys: true } : {}),
        }),
        options,
      );
      return 0;
    } catch (error) {
      if (!isCallgateError(error)) throw error;
      options.warn(refusalLine('export', error));
      return exitCodeOfKind(error.kind);
    }
  }
  requireDataDir(dataDir);
  let opened: Awaited<ReturnType<typeof openLedger>>;
  try {
    opened = await openLedger(dataDir, undefined, 'callgate export');
  } catch (error) {
    if (!isCallgateError(error) || error.kind !== 'conflict') throw error;
    options.warn(`callgate export: ${error.message}`);
    options.warn(
      `While a server runs on this folder, export through it:\n  ${exportThroughServer(options.run, readServerAddress(dataDir))}`,
    );
    // Refused, not bad input: the exit-code table's 1 (exitCodeOfThrown).
    return exitCodeOfKind(error.kind);
  }
  try {
    if (!(await opened.store.getRun(options.run))) {
      options.warn(`callgate export: no run ${options.run} in ${dataDir}`);
      return 1;
    }
    await writeBundle(
      await opened.ledger.exportRun(options.run, {
        openings: options.openings ?? false,
        proofs: options.proofs ?? false,
        revealRunKeys: options.revealRunKeys ?? false,
      }),
      options,
    );
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
    if (runs.length === 0) {
      options.print('no runs');
      return 0;
    }
    const rows = runs.map((run) => [
      run.run_id,
      run.status,
      new Date(run.started_at).toISOString(),
      run.framework,
      run.principal,
    ]);
    options.print(table([['run', 'status', 'started', 'framework', 'principal'], ...rows]));
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
  warn: (text: string) => void,
): Promise<number> {
  requireDataDir(dataDir);
  const { store } = openDataDir(dataDir);
  try {
    const run = await store.getRun(runId);
    if (!run) {
      warn(`callgate runs show: no run ${runId} in ${dataDir}`);
      return 1;
    }
    const rows = timelineOf(await store.readRunRecords(runId));
    print(
      `run ${run.run_id} — ${run.status}, ${run.framework}, principal ${run.principal}, ${count(rows.length, 'call')}`,
    );
    if (rows.length > 0) print(formatTimeline(rows));
    return 0;
  } finally {
    await store.close();
  }
}
