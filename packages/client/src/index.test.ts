import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as client from './index.js';

/** The names `export type { ... }` lists in a module's source (types leave no runtime trace). */
function exportedTypeNames(source: string): string[] {
  return [...source.matchAll(/export type \{([^}]*)\}/g)]
    .flatMap((match) => (match[1] ?? '').split(','))
    .map(
      (name) =>
        name
          .trim()
          .split(/\s+as\s+/)
          .pop() ?? '',
    )
    .filter((name) => name !== '')
    .sort();
}

describe('@callgate/client public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(client).sort()).toEqual([
      'CallgateClient',
      'CallgateError',
      'isCallgateError',
      'remoteGovernor',
    ]);
  });

  it('exports exactly these types (the wire types are inferred from @callgate/protocol)', () => {
    const source = readFileSync(new URL('./index.ts', import.meta.url), 'utf8');
    expect(exportedTypeNames(source)).toEqual([
      'AnyBundle',
      'ApiKeyInfo',
      'ApiKeyRole',
      'Approval',
      'ApprovalState',
      'ApprovalStatus',
      'Bundle',
      'BundleV2',
      'CallRequest',
      'CallSummary',
      'CallgateClientOptions',
      'ConsumeGrantRequest',
      'ConsumedGrant',
      'DecideResult',
      'ErrorKind',
      'Grant',
      'Health',
      'MessageRequest',
      'Outcome',
      'OutcomeRequest',
      'OutcomeResult',
      'RemoteGovernor',
      'Run',
      'RunStartRequest',
      'ToolSpec',
      'Verdict',
      'VerifyReport',
    ]);
    // No hand-written mirror: every wire type is an alias of a type inferred in the protocol.
    const types = readFileSync(new URL('./types.ts', import.meta.url), 'utf8');
    expect(types).not.toMatch(/^export interface /m);
    expect(types).not.toMatch(/^export type \w+ = \{/m);
  });
});
