// Tests and benchmarks reach other packages through their published entry points only (the
// package name and the subpaths its `exports` declare), never through another package's
// `src/` or `dist/` files: what they share lives in @callgate/testing. The import specifiers
// (static, dynamic, `require`, re-exports) are read with TypeScript's own pre-processor.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const PACKAGES = join(ROOT, 'packages');
const SOURCE = /\.(ts|mts|mjs|js)$/;

/** Each workspace package's folder name → its manifest name and declared subpaths (`./ledger`, ...). */
const manifests = new Map(
  readdirSync(PACKAGES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const manifest = JSON.parse(readFileSync(join(PACKAGES, entry.name, 'package.json'), 'utf8'));
      return [entry.name, { name: manifest.name as string, exports: Object.keys(manifest.exports ?? {}) }];
    }),
);

/** The workspace package folder `path` lies in, if any. */
function packageOf(path: string): string | undefined {
  const inside = relative(PACKAGES, path);
  if (inside.startsWith('..')) return undefined;
  return inside.split(sep)[0];
}

/**
 * The specifiers of `text` (the file at `path`) that reach into another package's files: a
 * relative path into another package's folder, or `@callgate/<name>/<subpath>` not declared in
 * that package's `exports`. Each entry is `specifier`.
 */
function internalImports(path: string, text: string): string[] {
  const own = packageOf(path);
  const found: string[] = [];
  for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
    if (specifier.startsWith('.')) {
      const target = packageOf(resolve(dirname(path), specifier));
      if (target !== undefined && target !== own) found.push(specifier);
      continue;
    }
    const scoped = /^(@callgate\/[^/]+)(\/.+)?$/.exec(specifier);
    if (!scoped?.[2]) continue;
    const manifest = [...manifests.values()].find((each) => each.name === scoped[1]);
    if (!manifest?.exports.includes(`.${scoped[2]}`)) found.push(specifier);
  }
  return found;
}

/** Files under `folder` (no node_modules, no dist) whose path `keep` accepts. */
function filesUnder(folder: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, keep));
    else if (SOURCE.test(entry.name) && keep(path)) out.push(path);
  }
  return out;
}

/** Every test and benchmark file: `*.test.*`, test-support folders, @callgate/testing, test/ and bench/. */
function testAndBenchFiles(): string[] {
  const inPackages = filesUnder(PACKAGES, (path) => {
    const inside = relative(PACKAGES, path).split(sep);
    return /\.test\.[a-z]+$/.test(path) || inside[1] === 'test-support' || inside[0] === 'testing';
  });
  return [
    ...inPackages,
    ...filesUnder(join(ROOT, 'test'), () => true),
    ...filesUnder(join(ROOT, 'bench'), () => true),
  ];
}

/**
 * Files still reaching into another package, each with why: to be moved to an entry point. The
 * test fails when one of them no longer does (so the list cannot outlive its reason).
 */
const STILL_REACHING: Record<string, string> = {
  // Times the gateway's internal JSON-RPC fast paths against the SDK's schemas, function by function.
  // Times the client's lossless JSON writer and reader against JSON.stringify and JSON.parse.
  'bench/client-json.mjs': 'micro-benchmark of @callgate/client internals',
  'bench/gateway-parse.mjs': 'micro-benchmark of @callgate/mcp-gateway internals',
};

describe('tests and benchmarks import other packages by their entry points', () => {
  it('finds reaching imports (the check itself)', () => {
    const inCore = join(PACKAGES, 'core/src/gate/some.test.ts');
    const inTest = join(ROOT, 'test/e2e/some.test.ts');
    expect(
      internalImports(
        inTest,
        `import { a } from '../../packages/core/src/gate/engine.js';
         const b = await import('../../packages/core/dist/ledger/ledger.js');
         const c = require('@callgate/server/dist/app.js');
         export { d } from '@callgate/core/src/index.js';
         import { e } from '@callgate/core';
         import { f } from '@callgate/testing/server';
         import { g } from './harness.js';`,
      ),
    ).toEqual([
      '../../packages/core/src/gate/engine.js',
      '../../packages/core/dist/ledger/ledger.js',
      '@callgate/server/dist/app.js',
      '@callgate/core/src/index.js',
    ]);
    expect(
      internalImports(
        inCore,
        `import { a } from '../../../mcp-gateway/src/x.js'; import { b } from './engine.js';`,
      ),
    ).toEqual(['../../../mcp-gateway/src/x.js']);
  });

  it('holds for every test and benchmark file', () => {
    const files = testAndBenchFiles();
    expect(files.length).toBeGreaterThan(100);
    const reaching = files.flatMap((path) =>
      internalImports(path, readFileSync(path, 'utf8')).map(
        (specifier) => `${relative(ROOT, path)}: ${specifier}`,
      ),
    );
    const fileOf = (line: string) => line.split(': ')[0] as string;
    expect(reaching.filter((line) => !(fileOf(line) in STILL_REACHING))).toEqual([]);
    const mended = Object.keys(STILL_REACHING).filter(
      (path) => !reaching.some((line) => fileOf(line) === path),
    );
    expect(mended).toEqual([]);
  });
});
