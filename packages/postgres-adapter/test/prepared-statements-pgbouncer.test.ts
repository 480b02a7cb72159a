/**
 * Named prepared statements behind a real PgBouncer in transaction mode with one server connection
 * (docs/decisions.md 10.30): every client connection's round trips run on that one backend, so
 * what one client connection prepared there, every other one finds.
 */
import { orThrow, type ConnectionTarget, type RunOptions } from '@sqlgate/core';
import { startLocalPgBouncer, type LocalPgBouncer } from '@sqlgate/testing';
import { Client } from 'pg';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { statementName } from '../src/prepared-statements';
import { database } from './support';

/** What core sends for a read proven free of side effects. */
const read: RunOptions = { rowMode: 'object', maxRows: 100, stopEarly: [true], nameable: [true] };
const TEXT = 'SELECT 40 + 2 AS answer';

let bouncer: LocalPgBouncer;
let connections: PostgresConnections;
beforeEach(async () => {
  bouncer = await startLocalPgBouncer({ server: database, poolMode: 'transaction', poolSize: 1 });
  connections = createPostgresConnections({ max: 1 });
});
afterEach(async () => {
  await connections.close();
  await bouncer.stop();
});

/** A caller of its own: PgBouncer lets any user in, and sqlgate keeps a pool per user. */
function caller(user: string): ConnectionTarget {
  const { host, port } = bouncer;
  return { host, port, user, password: 'any', database: bouncer.database, sslMode: 'disable' };
}

async function answer(target: ConnectionTarget): Promise<unknown[]> {
  const connection = await orThrow(connections.acquire(target));
  try {
    return (await orThrow(connection.run(TEXT, read))).rows;
  } finally {
    connection.release();
  }
}

/** Runs `sql` on PgBouncer's one backend, from a client connection of its own. */
async function onTheBackend(sql: string): Promise<Record<string, unknown>[]> {
  const client = new Client({
    host: bouncer.host,
    port: bouncer.port,
    user: 'observer',
    database: bouncer.database,
  });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const HELD =
  'SELECT name, statement, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements';

it('prepares a name another client connection prepared on the backend (42P05) anew in its place, and goes on naming', async () => {
  expect(await answer(caller('alice'))).toEqual([{ answer: 42 }]);
  // Bob's connection parses the same name on the same backend: 42P05, prepared anew in place.
  for (let run = 0; run < 3; run++) expect(await answer(caller('bob'))).toEqual([{ answer: 42 }]);
  // One statement, under the name of its text: Bob's first run closed and parsed it anew (run
  // once), his later two bound it without a Parse.
  expect(await onTheBackend(HELD)).toEqual([
    { name: statementName(TEXT), statement: TEXT, runs: 3 },
  ]);
});

it('prepares a statement the backend lost (26000) again, and goes on naming', async () => {
  for (let run = 0; run < 2; run++) expect(await answer(caller('alice'))).toEqual([{ answer: 42 }]);
  // Another client's DEALLOCATE ALL reaches the same backend: Alice's name is gone from it.
  await onTheBackend('DEALLOCATE ALL');
  for (let run = 0; run < 3; run++) expect(await answer(caller('alice'))).toEqual([{ answer: 42 }]);
  expect(await onTheBackend(HELD)).toEqual([
    { name: statementName(TEXT), statement: TEXT, runs: 3 },
  ]);
});
