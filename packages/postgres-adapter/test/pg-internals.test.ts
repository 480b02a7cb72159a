/**
 * Pins every pg behaviour that src/pg-internals.ts relies on and pg does not promise as public API,
 * and that pg, given the login only, stays out of the query path. When a pg release changes one of
 * them, this file fails and names it.
 */
import { clientClass, clientConfig } from '../src/client';
import { DEFAULT_FRAMING_LIMITS } from '../src/message-framing';
import { askServer } from '../src/bounded-query';
import { prepareValue } from '../src/pg-internals';
import { TypeRegistry } from '../src/types/type-registry';
import { testTarget } from './support';

it('prepareValue turns arrays, objects and nulls into parameter text', () => {
  expect(prepareValue([1, null, 'a"b'])).toBe('{"1",NULL,"a\\"b"}');
  expect(prepareValue({ a: 1 })).toBe('{"a":1}');
  expect(prepareValue(null)).toBeNull();
  expect(prepareValue(true)).toBe('true');
});

it('pg logs in over the stream option and is given nothing after; its client ends cleanly', async () => {
  const target = testTarget('disable');
  const Client = clientClass(2000, {
    sslMode: 'disable',
    tls: false,
    limits: DEFAULT_FRAMING_LIMITS,
  });
  const client = new Client(clientConfig(target));
  await client.connect();
  const pgMessages: unknown[] = [];
  client.on('notice', (message) => pgMessages.push(message));
  client.on('notification', (message) => pgMessages.push(message));
  try {
    expect(client.serverSocket.framing.facts.parameters.get('server_version')).toMatch(/^\d+/);
    const types = new TypeRegistry();
    await expect(
      askServer(client.serverSocket, types, ['SELECT 1 / (g - 1) FROM generate_series(1, 1) g']),
    ).rejects.toMatchObject({ code: '22012', severity: 'ERROR' });
    expect(client.serverSocket.framing.facts.transactionStatus).toBe('I');
    const rows = await askServer(client.serverSocket, types, [
      "DO $$ BEGIN RAISE NOTICE 'to nobody'; END $$",
      'SELECT 2 AS two',
    ]);
    expect(rows).toEqual([{ two: 2 }]);
    expect(pgMessages).toEqual([]);
  } finally {
    await client.end();
  }
});
