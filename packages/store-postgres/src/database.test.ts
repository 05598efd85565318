import { isCallgateError } from '@callgate/core';
import { describe, expect, it } from 'vitest';
import { checkSchemaName, clientConfig, describeUrl, durabilityOf, storeError } from './database.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('PostgreSQL errors in callgate words', () => {
  it.each([
    withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('database "gate" is not currently accepting connections', '55000'),
    withCode('connection failure', '08006'),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
  ])('an unreachable database is gate-unavailable, naming it: %s', (error) => {
    const mapped = storeError(error, 'postgres://u@db:5432/gate');
    expect(isCallgateError(mapped) && mapped.kind).toBe('gate-unavailable');
    expect((mapped as Error).message).toBe(
      `PostgreSQL at postgres://u@db:5432/gate is unreachable: ${error.message}`,
    );
  });

  it('a unique violation is a conflict when the caller says what conflicts, else left as it is', () => {
    const duplicate = withCode('duplicate key value violates unique constraint "runs_pkey"', '23505');
    const mapped = storeError(duplicate, 'db', 'run r exists');
    expect(isCallgateError(mapped) && mapped.kind).toBe('conflict');
    expect(storeError(duplicate, 'db')).toBe(duplicate);
    const syntax = withCode('syntax error', '42601');
    expect(storeError(syntax, 'db')).toBe(syntax);
  });

  it('never shows the password of a URL', () => {
    expect(describeUrl('postgres://gate:s3cret@db:5432/gate')).toBe('postgres://gate@db:5432/gate');
  });

  it('takes only plain lower-case schema names (they are spliced into search_path)', () => {
    expect(checkSchemaName('callgate_2')).toBe('callgate_2');
    for (const bad of ['Callgate', 'a;drop', '1abc', '', 'x'.repeat(64)])
      expect(() => checkSchemaName(bad)).toThrow(/schema/);
  });
});

describe('connection settings', () => {
  it('keeps the URL’s own options beside the schema’s search_path', () => {
    const config = clientConfig(
      { url: 'postgres://gate@db:5432/gate?options=-c%20synchronous_commit%3Doff&sslmode=disable' },
      'callgate',
    );
    expect(config.options).toBe('-c synchronous_commit=off -c search_path=callgate');
    expect(config.connectionString).toBe('postgres://gate@db:5432/gate?sslmode=disable');
    expect(clientConfig({ url: 'postgres://db/gate' }, 's').options).toBe('-c search_path=s');
  });

  it('names the durability of a commit in the Store’s words', () => {
    expect(durabilityOf('off')).toBe('NORMAL');
    for (const value of ['on', 'local', 'remote_write', 'remote_apply', undefined])
      expect(durabilityOf(value)).toBe('FULL');
  });
});
