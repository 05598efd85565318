// Libraries take a logger (core's `Logger` port) and never write to the console or make a
// logger of their own: only the command (`@callgate/cli`) makes one, with pino.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const workspaces: string[] = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces;

/** A package's own source files (no tests, no test support). */
function sourcesOf(folder: string): string[] {
  const source = join(ROOT, folder, 'src');
  return (readdirSync(source, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.includes('test-support'))
    .map((file) => join(source, file));
}

describe('libraries log only through the logger they are given', () => {
  const libraries = workspaces.filter((folder) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8'));
    return manifest.name !== '@callgate/cli' && !manifest.private;
  });

  it('no library source writes to the console or imports pino', () => {
    expect(libraries.length).toBeGreaterThan(8);
    const offending: string[] = [];
    for (const folder of libraries) {
      for (const file of sourcesOf(folder)) {
        const text = readFileSync(file, 'utf8');
        if (/\bconsole\.\w+\(/.test(text) || /from 'pino'/.test(text))
          offending.push(file.slice(ROOT.length + 1));
      }
    }
    expect(offending).toEqual([]);
  });

  it('the command makes its logger with pino', () => {
    expect(readFileSync(join(ROOT, 'packages/cli/src/log.ts'), 'utf8')).toContain("from 'pino'");
  });
});
