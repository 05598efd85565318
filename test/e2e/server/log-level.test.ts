// `callgate serve`'s log lines (pino, on standard error): `--debug` shows debug lines (here an
// upstream's own standard error), an unknown CALLGATE_LOG_LEVEL stops the command naming it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../gateway/harness.js';
import { runCallgate, startCallgate } from './harness.js';

const upstreamsYaml = (dir: string) => `
upstreams:
  - name: files
    stdio: { command: ${JSON.stringify(join(BIN, 'mcp-server-filesystem'))}, args: [${JSON.stringify(dir)}] }
`;

/** The JSON log lines of a server's output. */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('callgate serve log levels', () => {
  it('--debug logs debug lines (an upstream’s standard error); the default does not', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'callgate-log-level-'));
    const debug = await startCallgate({ keys: {}, config: upstreamsYaml(folder), arguments: ['--debug'] });
    const plain = await startCallgate({ keys: {}, config: upstreamsYaml(folder) });
    try {
      await expect
        .poll(() => logLines(debug.output()).filter((line) => line.level === 'debug'), { timeout: 15_000 })
        .toContainEqual(
          expect.objectContaining({ level: 'debug', upstream: 'files', message: 'upstream stderr' }),
        );
      expect(logLines(plain.output()).filter((line) => line.level === 'debug')).toEqual([]);
    } finally {
      await Promise.all([debug.stop(), plain.stop()]);
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('an unknown CALLGATE_LOG_LEVEL is refused, naming the variable and the levels', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callgate-log-level-'));
    try {
      const run = await runCallgate(['serve', '--port', '0', '--data', join(dir, 'data')], {
        CALLGATE_LOG_LEVEL: 'loud',
      });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('CALLGATE_LOG_LEVEL: expected one of trace, debug, info');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
