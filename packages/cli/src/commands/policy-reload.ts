import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { CallgateClient, isCallgateError } from '@callgate/client';
import { exitCodeOfKind, refusalLine } from '../exit-codes.js';

/**
 * `callgate policy reload [--file FILE] --url URL --key KEY`: puts a new policy in force on a
 * running server (as SIGHUP does, or with the file's text).
 * @returns 0 when in force (or unchanged); 2 for unreadable input or a policy the server refuses
 *   as invalid (`policy-invalid`, `request-invalid`: as `policy test` exits for a policy that does
 *   not load); 1 when the server refused it otherwise (unauthorized, unreachable, conflict).
 */
export async function runPolicyReload(options: {
  file?: string;
  url: string;
  key?: string;
  print: (line: string) => void;
  /** Where a refusal or an error goes (standard error). */
  warn: (line: string) => void;
}): Promise<number> {
  const { print, warn } = options;
  let text: string | undefined;
  if (options.file) {
    try {
      text = await readFile(options.file, 'utf8');
    } catch (error) {
      warn(`callgate policy reload: cannot read ${options.file}: ${(error as Error).message}`);
      return 2;
    }
  }
  const client = new CallgateClient({ url: options.url, ...(options.key ? { apiKey: options.key } : {}) });
  try {
    const reload = await client.reloadPolicy(
      text === undefined ? {} : { policy: text, source: basename(options.file ?? 'policy') },
    );
    if (!reload.changed) print(`policy unchanged (${reload.policy_digest})`);
    else
      print(
        `policy in force: ${reload.policy_digest} (was ${reload.previous_digest}); recorded in run ${reload.run_id}`,
      );
    return 0;
  } catch (error) {
    if (!isCallgateError(error)) throw error;
    warn(refusalLine('policy reload', error));
    return exitCodeOfKind(error.kind);
  }
}
