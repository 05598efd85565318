// The `callgate` command's exit codes, in one place: what each means (printed under every
// command's help) and which a CallgateError's kind gets.
import { type CallgateError, type ErrorKind, isCallgateError } from '@callgate/protocol';
import { CommanderError } from 'commander';

/** The exit codes' legend, printed after each command's help. */
export const EXIT_CODES = `
Exit codes:
  0  success
  1  the command ran and found a failure (a check failed, a run was not found, the server refused,
     the API key was not accepted, a witness did not cosign, the data folder is in use by a
     running server)
  2  bad usage or bad input: an unknown option, an empty value, a malformed value (--key,
     --public-key, --witness), options that cannot go together, a data folder with no callgate
     data, a file that does not parse or is too large, a policy that does not load`;

/** The error kinds that say the command's own input was bad: exit code 2. */
const INPUT_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'request-invalid',
  'policy-invalid',
  'tool-args-invalid',
]);

/**
 * The exit code of a command that ended with a CallgateError of `kind`: 2 when the input it was
 * given is at fault (`request-invalid`, `policy-invalid`, `tool-args-invalid`, whether the command
 * found it or a server it sent it to did), 1 for any other refusal or failure.
 */
export function exitCodeOfKind(kind: ErrorKind): 1 | 2 {
  return INPUT_KINDS.has(kind) ? 2 : 1;
}

/**
 * The line a command prints when a server refused it with `error`: `callgate NAME: kind: message`,
 * and for `unauthorized` what to pass (`--key KEY` or CALLGATE_API_KEY). Its exit code is
 * {@link exitCodeOfKind}.
 */
export function refusalLine(name: string, error: Pick<CallgateError, 'kind' | 'message'>): string {
  const hint =
    error.kind === 'unauthorized' || error.kind === 'forbidden'
      ? ' (pass an API key of a role that may do this with --key KEY or CALLGATE_API_KEY)'
      : '';
  return `callgate ${name}: ${error.kind}: ${error.message}${hint}`;
}

/**
 * The exit code of a command that ended by throwing `error` (bin.ts): 0 for commander's help and
 * version, 2 for a usage error commander reported; 1 for a `conflict` — the command ran and was
 * refused, as when the data folder is in use by a running server (its writer lock is held:
 * `log-key rotate`, `export` without `--url`, a second `serve`); 2 for anything else thrown, which
 * is input a command could not take.
 */
export function exitCodeOfThrown(error: unknown): 0 | 1 | 2 {
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  if (isCallgateError(error) && error.kind === 'conflict') return 1;
  return 2;
}
