/**
 * A server message whose string lacks its NUL made pg's parser loop for ever and hung the whole
 * process (docs/decisions.md 10.1). It must end that connection with PROTOCOL_ERROR, at once.
 */
import { ConnectionError, orThrow } from '@sqlgate/core';
import { startFakePostgres, type FakePostgres } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { fakeServerTarget, failureOf } from './support';

const brokenError = (() => {
  const body = Buffer.from('SERROR\0Mno terminator', 'latin1');
  const header = Buffer.alloc(5);
  header.write('E', 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
})();

let fake: FakePostgres;
beforeAll(async () => {
  fake = await startFakePostgres({ behaviour: () => ({ chunks: [brokenError], then: 'serve' }) });
});
afterAll(() => fake.close());

it('answers PROTOCOL_ERROR for an ErrorResponse without its NUL, and the process goes on', async () => {
  const connections = createPostgresConnections();
  try {
    const connection = await orThrow(connections.acquire(fakeServerTarget(fake)));
    const failure = await failureOf(connection.run('SELECT 1', { rowMode: 'object', maxRows: 1 }));
    connection.release({ destroy: true });
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(failure).toMatchObject({ code: 'PROTOCOL_ERROR' });
    // The event loop is free: a timer still fires.
    await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    await connections.close();
  }
}, 10_000);
