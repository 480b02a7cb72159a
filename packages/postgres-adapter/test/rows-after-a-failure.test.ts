/**
 * A round trip takes no row after its ErrorResponse, nor after a message that broke the protocol,
 * even when they arrive in the same chunk (docs/decisions.md 10.1). Each answer below arrives in
 * one write.
 */
import { ConnectionError, DatabaseError, orThrow, type RowSink } from '@sqlgate/core';
import {
  backend,
  replyWith,
  startFakePostgres,
  type BackendMessage,
  type FakePostgres,
} from '@sqlgate/testing';
import { createPostgresConnections } from '../src';
import { failureOf, fakeServerTarget } from './support';

const ROW_START: BackendMessage[] = [
  backend.parseComplete(),
  backend.bindComplete(),
  backend.rowDescription([{ name: 'v' }]),
  backend.dataRow(['1']),
];

/** A streamed statement's sink that records the rows it is handed. */
function recordingSink(rows: unknown[]): RowSink {
  return {
    describe: () => undefined,
    row: (_position, row) => {
      rows.push(row);
      return true;
    },
    drained: () => Promise.resolve(),
    complete: () => undefined,
  };
}

async function streamedRows(
  answer: BackendMessage[],
): Promise<{ rows: unknown[]; failure: unknown }> {
  const fake: FakePostgres = await startFakePostgres({ behaviour: () => replyWith(answer) });
  const connections = createPostgresConnections();
  try {
    const connection = await orThrow(connections.acquire(fakeServerTarget(fake)));
    const rows: unknown[] = [];
    const failure = await failureOf(
      connection.run('SELECT 1', { rowMode: 'object', maxRows: 10, rowSink: recordingSink(rows) }),
    );
    connection.release();
    return { rows, failure };
  } finally {
    await connections.close();
    await fake.close();
  }
}

it('hands no row after an ErrorResponse to the statement', async () => {
  const { rows, failure } = await streamedRows([
    ...ROW_START,
    backend.errorResponse({ S: 'ERROR', V: 'ERROR', C: 'XX000', M: 'boom' }),
    backend.dataRow(['after the error']),
    backend.readyForQuery('I'),
  ]);
  expect(rows).toEqual([{ v: '1' }]);
  expect(failure).toBeInstanceOf(DatabaseError);
  expect(failure).toMatchObject({ sqlState: 'XX000' });
});

it('hands no row after a message that broke the protocol to the statement', async () => {
  const { rows, failure } = await streamedRows([
    ...ROW_START,
    backend.copyData('zz'),
    backend.dataRow(['after the copy data']),
    backend.dataRow(['and another']),
    backend.commandComplete('SELECT 3'),
    backend.readyForQuery('I'),
  ]);
  expect(rows).toEqual([{ v: '1' }]);
  expect(failure).toBeInstanceOf(ConnectionError);
  expect(failure).toMatchObject({ code: 'PROTOCOL_ERROR' });
});
