// The PostgreSQL that tests run against: `CALLGATE_TEST_PG_URL`, set by scripts/with-postgres.sh
// (which scripts/test.sh runs them through). Without it the PostgreSQL tests skip, except under
// CI=true, where a missing database is a failure: CI must never pass by skipping them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The test database's URL, or undefined (outside CI) when none is configured. */
export function testPostgresUrl(): string | undefined {
  const url = process.env.CALLGATE_TEST_PG_URL;
  if (url) return url;
  if (process.env.CI === 'true')
    throw new Error(
      'CALLGATE_TEST_PG_URL is not set under CI=true: run the PostgreSQL tests through scripts/with-postgres.sh',
    );
  return undefined;
}

/** A fresh schema name for one test (`t_<16 hex>`). */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file: its URL and how to drop it (ending its connections). */
export async function freshDatabase(
  url: string,
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = freshSchema('cg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs one statement on the server's maintenance database (e.g. ALTER DATABASE). */
export async function adminQuery(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}
