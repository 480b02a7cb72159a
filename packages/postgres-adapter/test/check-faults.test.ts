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
