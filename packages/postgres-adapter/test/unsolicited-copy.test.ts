/**
 * COPY data is accepted only for a streamed COPY ... TO STDOUT (docs/decisions.md 10.22): a server
 * that answers any other statement with COPY data breaks the protocol, and the connection ends.
 */
import { ConnectionError, orThrow } from '@sqlgate/core';
import { backend, replyWith, startFakePostgres, type FakePostgres } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { failureOf, fakeServerTarget } from './support';

let fake: FakePostgres;
beforeAll(async () => {
  fake = await startFakePostgres({
    behaviour: () =>
      replyWith([
        backend.parseComplete(),
        backend.bindComplete(),
        backend.noData(),
        backend.copyOutResponse(1),
        backend.copyData('forged\n'),
        backend.copyDone(),
        backend.commandComplete('COPY 1'),
        backend.readyForQuery('I'),
      ]),
  });
});
afterAll(() => fake.close());

it.each([
  ['a buffered statement', {}],
  [
    'a streamed SELECT (its sink takes rows, not COPY data)',
    {
      rowSink: {
        describe: () => undefined,
        row: () => true,
        drained: () => Promise.resolve(),
        complete: () => undefined,
      },
    },
  ],
])('ends the connection when COPY data answers %s', async (_what, extra) => {
  const connections = createPostgresConnections();
  try {
    const connection = await orThrow(connections.acquire(fakeServerTarget(fake)));
    const failure = await failureOf(
      connection.run('SELECT 1', { rowMode: 'object', maxRows: 10, ...extra }),
    );
    connection.release();
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(failure).toMatchObject({ code: 'PROTOCOL_ERROR' });
  } finally {
    await connections.close();
  }
});
