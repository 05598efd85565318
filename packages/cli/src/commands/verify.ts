import {
  parseVerifierKey,
  parseWitnessKey,
  repeatedWitness,
  verifyBundleBytes,
  type WitnessKey,
} from '@callgate/core/ledger';
import { count } from '../format.js';
import { readBundleInput } from './verify-input.js';

export interface VerifyOptions {
  publicKey?: string;
  strict?: boolean;
  expectSize?: number;
  /** Witness vkeys; the newest checkpoint must carry `quorum` (default all) of their cosignatures. */
  witness?: string[];
  quorum?: number;
  json?: boolean;
  /** Where the report goes (standard output): a bundle that fails its checks is a result. */
  out: (line: string) => void;
  /** Where an error goes (standard error): bad arguments, input that is no bundle (exit 2). */
  err: (line: string) => void;
  /** What `-` reads (process.stdin by default). */
  stdin?: NodeJS.ReadableStream;
}

/**
 * What is wrong with the keys and quorum given, before any bundle is read: a `--public-key` or
 * `--witness` that is not a key, or a `--quorum` the witnesses given cannot meet. Undefined when
 * they are usable.
 */
function badArguments(options: VerifyOptions): string | undefined {
  if (options.publicKey !== undefined) {
    try {
      parseVerifierKey(options.publicKey);
    } catch (error) {
      return `--public-key is not a verifier key (name+id+key): ${(error as Error).message}`;
    }
  }
  const witnesses = options.witness ?? [];
  const keys: WitnessKey[] = [];
  for (const [index, text] of witnesses.entries()) {
    try {
      keys.push(parseWitnessKey(text));
    } catch (error) {
      return `--witness ${JSON.stringify(text)}${witnesses.length > 1 ? ` (number ${index + 1})` : ''} is not a witness key (name+id+key, C2SP tlog-cosignature): ${(error as Error).message}`;
    }
  }
  const repeated = repeatedWitness(keys);
  if (repeated !== undefined)
    return `--witness ${JSON.stringify(witnesses[repeated[1]])} is the same witness as --witness ${JSON.stringify(witnesses[repeated[0]])}: a quorum counts distinct witnesses, give each once`;
  if (options.quorum !== undefined && options.quorum > witnesses.length)
    return `--quorum ${options.quorum} cannot be met by ${witnesses.length} --witness key${witnesses.length === 1 ? '' : 's'}: give at least ${options.quorum} --witness keys, or a smaller --quorum`;
  return undefined;
}

/**
 * `callgate verify FILE`: every check of a bundle, offline, read losslessly (a record line with a
 * duplicate key or not in its canonical form fails, naming its line). FILE `-` reads standard
 * input. Exit code 0 when all hold, 1 when any fails (a witness that did not cosign included), 2
 * when the file cannot be read, is larger than the verifier reads (MAX_BUNDLE_BYTES, 511 MiB) or
 * is no bundle's text (empty, gzip, UTF-16, a UTF-8 byte-order mark first, not UTF-8, not JSON;
 * `verifyBundleBytes`), or when an argument is malformed (a `--public-key` or `--witness` that is
 * not a key, a `--quorum` larger than the number of `--witness` keys).
 */
export async function runVerify(file: string, options: VerifyOptions): Promise<number> {
  const bad = badArguments(options);
  if (bad !== undefined) {
    options.err(`callgate verify: ${bad}`);
    return 2;
  }
  const name = file === '-' ? 'standard input' : file;
  const input = await readBundleInput(file, options.stdin);
  if ('problem' in input) {
    options.err(`callgate verify: ${name} ${input.problem}`);
    return 2;
  }
  // The bytes are verified as read, by the one input rule `POST /v1/verify` follows too: bytes
  // that are no bundle's text (empty, too large, gzip, UTF-16, a byte-order mark first, not UTF-8,
  // not JSON) exit 2.
  const verdict = verifyBundleBytes(input.bytes, {
    ...(options.publicKey !== undefined ? { publicKey: options.publicKey } : {}),
    ...(options.strict ? { strict: true } : {}),
    ...(options.expectSize !== undefined ? { expectSize: options.expectSize } : {}),
    ...(options.witness?.length ? { witnesses: options.witness } : {}),
    ...(options.quorum !== undefined ? { quorum: options.quorum } : {}),
  });
  if (!verdict.readable) {
    options.err(`callgate verify: ${name} is not a bundle: it ${verdict.refusal}`);
    return 2;
  }
  const report = verdict.report;
  if (options.json) {
    options.out(JSON.stringify(report, null, 2));
  } else {
    for (const failure of report.failures) {
      const where =
        failure.seq !== undefined
          ? `record seq=${failure.seq} run=${failure.run_id ?? '?'} type=${failure.type ?? '?'}`
          : 'bundle';
      options.out(`FAIL ${failure.check}: ${where}: ${failure.message}`);
    }
    for (const warning of report.warnings) options.out(`warning: ${warning}`);
    options.out(
      `${report.ok ? 'OK' : 'FAILED'}: ${count(report.records, 'record')}, ${count(report.checkpoints, 'checkpoint')}, ${count(report.failures.length, 'failed check')}`,
    );
  }
  return report.ok ? 0 : 1;
}
