/**
 * A json value is spliced into the response as its text (docs/decisions.md 10.13): a text that is
 * not JSON must come back as a string, or a server could forge the structure of the response.
 */
import { serializeResponse, orThrow } from '@sqlgate/core';
import { backend, replyWith, startFakePostgres, type FakePostgres } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { fakeServerTarget } from './support';

const FORGED = '1}],"fields":[],"rowCount":0,"forged":true,"rows":[{"j":"all good"';

let fake: FakePostgres;
beforeAll(async () => {
  fake = await startFakePostgres({
    behaviour: () =>
      replyWith([
        backend.parseComplete(),
        backend.bindComplete(),
        backend.rowDescription([{ name: 'j', typeOid: 114 }]),
        backend.dataRow([FORGED]),
        backend.dataRow(['{"n": 12345678901234567890123}']),
        backend.commandComplete('SELECT 2'),
        backend.readyForQuery('I'),
      ]),
  });
});
afterAll(() => fake.close());

it('returns a json text that is not JSON as a string, and splices valid json as it is', async () => {
  const connections = createPostgresConnections({ rawJson: true });
  try {
    const connection = await orThrow(connections.acquire(fakeServerTarget(fake)));
    const result = await orThrow(
      connection.run('SELECT j FROM forged', { rowMode: 'object', maxRows: 10 }),
    );
    connection.release();
    const body = JSON.parse(serializeResponse({ rows: result.rows })) as { rows: unknown[] };
    expect(body).toEqual({ rows: [{ j: FORGED }, { j: { n: 1.2345678901234568e22 } }] });
    expect(serializeResponse({ rows: result.rows })).toContain('12345678901234567890123');
  } finally {
    await connections.close();
  }
});
