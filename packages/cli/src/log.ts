// The command's logger: pino, one JSON line per event on the stream the command gives
// (standard error), at the level `--debug` or `CALLGATE_LOG_LEVEL` chooses. Libraries take it
// through core's `Logger` port; only the command makes one.
import type { Logger } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import { pino } from 'pino';

/** The levels, most verbose first; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The level to log at: `debug` with `--debug`, else `CALLGATE_LOG_LEVEL` (case-insensitive),
 * else `info`.
 *
 * @throws CallgateError `request-invalid` naming the variable when it holds no known level.
 */
export function logLevelOf(debug: boolean | undefined, env: Record<string, string | undefined>): LogLevel {
  if (debug) return 'debug';
  const named = env.CALLGATE_LOG_LEVEL?.trim().toLowerCase();
  if (named === undefined || named === '') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(named)) return named as LogLevel;
  throw new CallgateError(
    'request-invalid',
    `CALLGATE_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(env.CALLGATE_LOG_LEVEL)}`,
    { path: 'CALLGATE_LOG_LEVEL' },
  );
}

/**
 * A pino logger writing one JSON line per event at `level` and above to `write` (without the
 * newline): `{"level":"info","time":"<ISO 8601>", ...fields, "message": "..."}`.
 *
 * @param write receives each line (the command passes standard error; tests collect them).
 * @param level the lowest level written; default `info`.
 */
export function lineLogger(write: (line: string) => void, level: LogLevel = 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (chunk: string) => write(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk) },
  );
}
