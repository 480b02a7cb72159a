/**
 * A COPY ... FROM STDIN sent through run(), not copyFrom(), has no data to send: the server's
 * request for it is answered with CopyFail and a Sync (docs/decisions.md 10.42), the statement
 * fails with PostgreSQL's own error, nothing is loaded, and the connection serves the next
 * statement. Against the real PostgreSQL: what it does in COPY mode with the messages around it is
 * the point (followed by another statement of the same round trip, it ends the connection itself).
 */
import { DatabaseError, orThrow, type RunOptions } from '@sqlgate/core';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { failureOf, testTarget } from './support';

// A silent server would end in SERVER_TIMEOUT, not in a hang.
const options: RunOptions = { rowMode: 'object', maxRows: 10, silenceLimitMs: 3000 };
let connections: PostgresConnections;

beforeAll(async () => {
  connections = createPostgresConnections();
  const connection = await orThrow(connections.acquire(testTarget()));
  await orThrow(connection.run('DROP TABLE IF EXISTS copy_in_t', options));
  await orThrow(connection.run('CREATE TABLE copy_in_t (a int)', options));
  connection.release();
});
afterAll(async () => {
  const connection = await orThrow(connections.acquire(testTarget()));
  await orThrow(connection.run('DROP TABLE copy_in_t', options));
  connection.release();
  await connections.close();
});

it('fails a lone COPY FROM STDIN with the server error, and the connection goes on', async () => {
  const connection = await orThrow(connections.acquire(testTarget()));
  try {
    const failure = await failureOf(
      connection.run('/* a hint */ COPY copy_in_t FROM STDIN', options),
    );
    expect(failure).toBeInstanceOf(DatabaseError);
    expect((failure as DatabaseError).fields.message).toMatch(/COPY from stdin failed/);
    const after = await orThrow(
      connection.run('SELECT count(*)::int AS n FROM copy_in_t', options),
    );
    expect(after.rows).toEqual([{ n: 0 }]);
  } finally {
    connection.release();
  }
});
