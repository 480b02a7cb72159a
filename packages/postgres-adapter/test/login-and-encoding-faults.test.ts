/**
 * A server whose login requests are out of order or malformed, or whose client_encoding leaves
 * UTF8, breaks the protocol as sqlgate reads it: the caller gets PROTOCOL_ERROR, never a driver's
 * internal message, a hang, or values with their characters replaced (docs/decisions.md 10.1).
 */
import { orThrow } from '@sqlgate/core';
import { backend, replyWith, startFakePostgres, type BackendMessage } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { failureOf, fakeServerTarget, testTarget } from './support';

/** An Authentication message of `request` with `rest` after it. */
const authentication = (request: number, rest: Buffer): BackendMessage => {
  const head = Buffer.alloc(4);
  head.writeInt32BE(request);
  return { type: 'R', body: Buffer.concat([head, rest]) };
};

it.each<[string, BackendMessage[]]>([
  [
    'a SASL continuation after an MD5 request',
    [authentication(5, Buffer.from([1, 2, 3, 4])), authentication(11, Buffer.from('r=x'))],
  ],
  [
    'a SASL continuation after a cleartext request',
    [authentication(3, Buffer.alloc(0)), authentication(11, Buffer.from('r=x'))],
  ],
  ['an MD5 request with a 2-byte salt', [authentication(5, Buffer.from([1, 2]))]],
  ['no authentication at all', [backend.readyForQuery('I')]],
  ['two AuthenticationOk', [backend.authenticationOk(), backend.authenticationOk()]],
  [
    'an AuthenticationOk in the middle of a SCRAM exchange',
    [backend.authenticationRequest(10), backend.authenticationOk()],
  ],
])('refuses a login with %s, at once', async (_what, login) => {
  const fake = await startFakePostgres({ login: () => replyWith(login) });
  // A connect timeout past the test's own: only the refusal itself can end the login in time.
  const connections = createPostgresConnections({ connectTimeoutMs: 600_000 });
  try {
    const failure = await failureOf(
      connections.acquire({ ...fakeServerTarget(fake), password: 'pw' }),
    );
    expect(failure).toMatchObject({ code: 'PROTOCOL_ERROR' });
    expect(failure.message).not.toMatch(/Cannot read|undefined/);
  } finally {
    await connections.close();
    await fake.close();
  }
});

it('refuses values sent after client_encoding left UTF8, and drops the connection', async () => {
  const connections = createPostgresConnections({ max: 1 });
  try {
    const connection = await orThrow(connections.acquire(testTarget()));
    const failure = await failureOf(
      connection.run(
        "SELECT set_config('client_encoding', 'LATIN1', false) AS encoding, 'héllo' AS v",
        { rowMode: 'object', maxRows: 10 },
      ),
    );
    connection.release({ destroy: true });
    expect(failure).toMatchObject({ code: 'PROTOCOL_ERROR' });
    expect(failure.message).toMatch(/client_encoding became LATIN1/);
    // The next caller gets a connection in UTF8.
    const next = await orThrow(connections.acquire(testTarget()));
    const value = await orThrow(next.run("SELECT 'héllo' AS v", { rowMode: 'object', maxRows: 1 }));
    next.release();
    expect(value.rows).toEqual([{ v: 'héllo' }]);
  } finally {
    await connections.close();
  }
});
