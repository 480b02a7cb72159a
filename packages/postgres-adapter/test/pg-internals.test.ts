/**
 * Pins every pg behaviour that src/pg-internals.ts relies on and pg does not promise as public API.
 * When a pg release changes one of them, this file fails and names it.
 */
import { serialize } from 'pg-protocol';
import { clientClass, clientConfig } from '../src/client';
import { DEFAULT_FRAMING_LIMITS } from '../src/message-framing';
import { prepareValue, submit, type SubmittableConnection } from '../src/pg-internals';
import { testTarget } from './support';

it('prepareValue turns arrays, objects and nulls into parameter text', () => {
  expect(prepareValue([1, null, 'a"b'])).toBe('{"1",NULL,"a\\"b"}');
  expect(prepareValue({ a: 1 })).toBe('{"a":1}');
  expect(prepareValue(null)).toBeNull();
  expect(prepareValue(true)).toBe('true');
});

it('pg drives a stream object given as the stream option, and calls a submittable', async () => {
  const target = testTarget('disable');
  const Client = clientClass(2000, {
    sslMode: 'disable',
    tls: false,
    limits: DEFAULT_FRAMING_LIMITS,
  });
  const client = new Client(clientConfig(target));
  await client.connect();
  try {
    expect(client.serverSocket.framing.facts.parameters.get('server_version')).toMatch(/^\d+/);
    const calls: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      submit(client, {
        submit: () => {
          calls.push('submit');
          client.serverSocket.write(
            Buffer.concat([
              serialize.parse({
                text: 'SELECT 1 / (g - 1) FROM generate_series(1, 1) g',
                name: '',
                types: [],
              }),
              serialize.bind({}),
              serialize.describe({ type: 'P', name: '' }),
              serialize.execute({ portal: '', rows: 0 }),
              serialize.sync(),
            ]),
          );
          return null;
        },
        handleRowDescription: () => calls.push('rowDescription'),
        handleDataRow: () => calls.push('dataRow'),
        handleCommandComplete: () => calls.push('commandComplete'),
        handleReadyForQuery: () => {
          calls.push('readyForQuery');
          resolve();
        },
        handleError: (error: Error, connection: SubmittableConnection) => {
          calls.push(`error ${(error as Error & { code?: string }).code}`);
          connection.once('readyForQuery', () => {
            calls.push('connection readyForQuery');
            resolve();
          });
          expect(typeof connection.sendCopyFail).toBe('function');
          expect(typeof connection.off).toBe('function');
        },
        handleEmptyQuery: () => undefined,
        handlePortalSuspended: () => undefined,
        handleCopyInResponse: () => undefined,
        handleCopyData: () => undefined,
      });
      setTimeout(() => reject(new Error(`no answer; calls: ${calls.join(', ')}`)), 5000).unref();
    });
    await done;
    expect(calls).toEqual(['submit', 'rowDescription', 'error 22012', 'connection readyForQuery']);
    expect(client.serverSocket.framing.facts.transactionStatus).toBe('I');
  } finally {
    await client.end();
  }
});

it("pg's connection, handed to submit(), emits each ParameterDescription with its type OIDs", async () => {
  const target = testTarget('disable');
  const Client = clientClass(2000, {
    sslMode: 'disable',
    tls: false,
    limits: DEFAULT_FRAMING_LIMITS,
  });
  const client = new Client(clientConfig(target));
  await client.connect();
  try {
    const described = await new Promise<number[]>((resolve, reject) => {
      let types: number[] = [];
      const listener = (message: { dataTypeIDs: number[] }): void => {
        types = message.dataTypeIDs;
      };
      let connection: SubmittableConnection | undefined;
      submit(client, {
        submit: (given: SubmittableConnection) => {
          connection = given;
          given.on('parameterDescription', listener);
          client.serverSocket.write(
            Buffer.concat([
              serialize.parse({ text: 'SELECT $1::date, $2::int', name: '', types: [] }),
              serialize.describe({ type: 'S', name: '' }),
              serialize.sync(),
            ]),
          );
          return null;
        },
        handleRowDescription: () => undefined,
        handleReadyForQuery: () => {
          connection?.off('parameterDescription', listener);
          resolve(types);
        },
        handleError: (error: Error) => reject(error),
      });
      setTimeout(() => reject(new Error('no answer')), 5000).unref();
    });
    expect(described).toEqual([1082, 23]);
  } finally {
    await client.end();
  }
});
