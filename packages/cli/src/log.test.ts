import { describe, expect, it } from 'vitest';
import { lineLogger, logLevelOf } from './log.js';

describe('the command’s logger (pino)', () => {
  it('writes one JSON line per event at the level and above: level label, ISO time, fields, message', () => {
    const lines: string[] = [];
    const logger = lineLogger((line) => lines.push(line));
    logger.debug({ detail: 1 }, 'not at info');
    logger.info({ upstream: 'files', tools: 14 }, 'upstream connected');
    logger.error({ error: 'boom' }, 'request failed');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '');
    expect(first).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      upstream: 'files',
      tools: 14,
      message: 'upstream connected',
    });
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({
      level: 'error',
      error: 'boom',
      message: 'request failed',
    });
    expect(lines.every((line) => !line.endsWith('\n'))).toBe(true);
  });

  it('debug lines appear at debug, nothing at silent', () => {
    const debug: string[] = [];
    lineLogger((line) => debug.push(line), 'debug').debug({ stderr: 'hello' }, 'upstream stderr');
    expect(JSON.parse(debug[0] ?? '')).toMatchObject({ level: 'debug', stderr: 'hello' });
    const silent: string[] = [];
    lineLogger((line) => silent.push(line), 'silent').error({}, 'dropped');
    expect(silent).toEqual([]);
  });

  it('chooses the level: --debug, else CALLGATE_LOG_LEVEL, else info; an unknown level names the variable', () => {
    expect(logLevelOf(undefined, {})).toBe('info');
    expect(logLevelOf(undefined, { CALLGATE_LOG_LEVEL: 'WARN' })).toBe('warn');
    expect(logLevelOf(true, { CALLGATE_LOG_LEVEL: 'error' })).toBe('debug');
    expect(logLevelOf(undefined, { CALLGATE_LOG_LEVEL: ' ' })).toBe('info');
    expect(() => logLevelOf(undefined, { CALLGATE_LOG_LEVEL: 'loud' })).toThrow(
      'CALLGATE_LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, silent, got "loud"',
    );
  });
});
