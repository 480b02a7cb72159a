/** A connection check against a server that breaks the protocol answers PROTOCOL_ERROR (10.1). */
import { backend, replyWith, startFakePostgres, type BackendMessage } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { fakeServerTarget, failureOf } from './support';

it.each<[string, BackendMessage[]]>([
  ['a row before its description', [backend.dataRow(['15.0'])]],
  [
    'a row without the columns described',
    [backend.rowDescription([{ name: 'version' }]), backend.dataRow([])],
  ],
])('refuses %s', async (_what, rows) => {
  const fake = await startFakePostgres({
    behaviour: () =>
      replyWith([...rows, backend.commandComplete('SELECT 1'), backend.readyForQuery('I')]),
  });
  const connections = createPostgresConnections();
  try {
    const failure = await failureOf(connections.check(fakeServerTarget(fake)));
    expect(failure).toMatchObject({ code: 'PROTOCOL_ERROR' });
  } finally {
    await connections.close();
    await fake.close();
  }
});

it('reports TLS from its own handshake, not from what the server claims', async () => {
  // The fake refuses TLS ('N'), then claims in the check's answer that the connection is encrypted.
  const fake = await startFakePostgres({
    behaviour: () =>
      replyWith([
        backend.rowDescription([
          { name: 'version' },
          { name: 'database' },
          { name: 'user' },
          { name: 'ssl', typeOid: 16 },
        ]),
        backend.dataRow(['15.0', 'd', 'u', 't']),
        backend.commandComplete('SELECT 1'),
        backend.readyForQuery('I'),
      ]),
  });
  const connections = createPostgresConnections();
  try {
    const check = await connections.check({ ...fakeServerTarget(fake), sslMode: 'prefer' });
    expect(check).toMatchObject({ ok: true, value: { serverVersion: '15.0', ssl: false } });
  } finally {
    await connections.close();
    await fake.close();
  }
});
