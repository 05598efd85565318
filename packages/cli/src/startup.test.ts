import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = new URL('../dist/bin.js', import.meta.url).pathname;

/**
 * Runs the built CLI with `args` under a module-resolution hook that writes every workspace
 * package module it loads; returns those (`server`, `store-sqlite`, ...; not `server` for its
 * light `defaults` module) and the exit status.
 */
function packagesLoaded(args: string[]): { packages: Set<string>; status: number | null } {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-startup-'));
  const log = join(folder, 'loaded.txt');
  const hooks = join(folder, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
  return resolved;
}`,
  );
  const register = join(folder, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  writeFileSync(log, '');
  const run = spawnSync(process.execPath, ['--import', register, BIN, ...args], { encoding: 'utf8' });
  const packages = new Set<string>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    // `@callgate/server/defaults` is a module of constants, loaded by the options' help.
    const found = /\/packages\/([a-z0-9-]+)\/dist\/(.*)$/.exec(url);
    if (found?.[1] && !(found[1] === 'server' && found[2] === 'defaults.js')) packages.add(found[1]);
  }
  return { packages, status: run.status };
}

describe('what a command loads', () => {
  // A command pays at start for every module it imports: `verify` of a bundle once took 0.75 s of
  // CPU before reading a byte, loading the server, the gateway and SQLite it never uses.
  it('--help, verify and policy test load no server, gateway, store or client', () => {
    const bundle = join(mkdtempSync(join(tmpdir(), 'callgate-startup-')), 'empty.json');
    writeFileSync(bundle, '{}');
    for (const args of [['--help'], ['verify', bundle], ['policy', 'test', '--help'], ['keys', '--help']]) {
      const { packages, status } = packagesLoaded(args);
      expect(status, args.join(' ')).not.toBeNull();
      expect(packages.has('cli'), args.join(' ')).toBe(true);
      for (const heavy of ['server', 'mcp-gateway', 'store-sqlite', 'store-postgres', 'client'])
        expect(packages.has(heavy), `${args.join(' ')} loads ${heavy}`).toBe(false);
    }
  });

  it('loads what a command needs when it runs (serve --help stays light, export loads SQLite)', () => {
    expect(packagesLoaded(['serve', '--help']).packages.has('server')).toBe(false);
    const folder = mkdtempSync(join(tmpdir(), 'callgate-startup-'));
    const { packages } = packagesLoaded(['export', '--run', 'nope', '--data', folder]);
    expect(packages.has('store-sqlite')).toBe(true);
  });
});
