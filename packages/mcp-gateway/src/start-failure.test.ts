import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { explainStartFailure } from './start-failure.js';

const folder = mkdtempSync(join(tmpdir(), 'callgate-start-failure-'));
writeFileSync(join(folder, 'plain.txt'), 'not a program');
writeFileSync(join(folder, 'server.sh'), '#!/bin/sh\n');
chmodSync(join(folder, 'server.sh'), 0o755);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('explainStartFailure', () => {
  it('names the resolved path and the folder of a command that is not there', () => {
    expect(explainStartFailure({ command: 'node_modules/.bin/x', cwd: folder }, '/usr/bin')).toBe(
      `command node_modules/.bin/x resolves to ${join(folder, 'node_modules/.bin/x')}, which does not exist (relative paths are resolved against ${folder})`,
    );
    expect(explainStartFailure({ command: join(folder, 'missing'), cwd: folder }, '')).toBe(
      `command ${join(folder, 'missing')} resolves to ${join(folder, 'missing')}, which does not exist`,
    );
  });

  it('names a command that is not executable, one not on PATH, and a folder that is not there', () => {
    expect(explainStartFailure({ command: './plain.txt', cwd: folder }, '')).toMatch(
      /resolves to .*plain\.txt, which is not an executable file/,
    );
    expect(explainStartFailure({ command: 'no-such-program-here', cwd: folder }, '/nowhere')).toBe(
      `command no-such-program-here is not on PATH (/nowhere), started in ${folder}`,
    );
    expect(explainStartFailure({ command: 'x', cwd: join(folder, 'gone') }, '')).toBe(
      `its folder (cwd) ${join(folder, 'gone')} does not exist`,
    );
  });

  it('says nothing when the command and folder are fine (the failure is the upstream’s own)', () => {
    expect(explainStartFailure({ command: './server.sh', cwd: folder }, '')).toBeUndefined();
    expect(explainStartFailure({ command: 'server.sh', cwd: folder }, folder)).toBeUndefined();
  });
});
