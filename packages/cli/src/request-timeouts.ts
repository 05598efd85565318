// The time limits on receiving a request, as the options of every command that listens for HTTP
// (`callgate serve`, `callgate witness serve`): the same names, defaults and rule on both.
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '@callgate/server/defaults';
import type { Command } from 'commander';
import { duration } from './options.js';

/** The two options as commander reads them (ms), undefined when not given. */
export interface RequestTimeoutFlags {
  requestTimeout?: number;
  headersTimeout?: number;
}

/**
 * Adds `--request-timeout <duration>` (default 30s) and `--headers-timeout <duration>` (default
 * 10s, or the request's when that is shorter) to `command`, and refuses (exit 2) a headers timeout
 * longer than the request's, before the action runs: Node holds the headers' clock within the
 * request's, so a longer one would silently not apply.
 */
export function addRequestTimeoutOptions(command: Command): Command {
  command
    .option(
      '--request-timeout <duration>',
      `longest wait for a whole request, headers and body (30s, 500ms); then 408 and the connection closed (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000}s)`,
      duration,
    )
    .option(
      '--headers-timeout <duration>',
      `longest wait for a request’s headers; then 408 and the connection closed (default ${DEFAULT_HEADERS_TIMEOUT_MS / 1000}s, or --request-timeout when that is shorter; a longer one given is refused)`,
      duration,
    );
  command.hook('preAction', () => {
    const options = command.opts<RequestTimeoutFlags>();
    const request = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (options.headersTimeout !== undefined && options.headersTimeout > request)
      command.error(
        `error: option '--headers-timeout <duration>' (${options.headersTimeout} ms) cannot exceed option '--request-timeout <duration>' (${request} ms${options.requestTimeout === undefined ? ', its default' : ''}): the headers are part of the request`,
        { exitCode: 2, code: 'callgate.conflictingOption' },
      );
  });
  return command;
}
