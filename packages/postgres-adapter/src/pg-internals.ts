/**
 * Every pg behaviour sqlgate relies on that pg does not promise as public API, in one place. Each
 * is pinned by test/pg-internals.test.ts, which fails loudly when a pg release changes it. Nothing
 * else in the adapter reaches into pg.
 */
import pg from 'pg';
import type { ServerSocket } from './server-socket';

/**
 * pg's own conversion of a JavaScript value to a parameter's text (arrays as array literals,
 * objects as JSON, Buffers, Dates). pg exports it from `pg/lib/utils` only.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const prepareValue = (require('pg/lib/utils') as { prepareValue(value: unknown): unknown })
  .prepareValue;

/**
 * pg's `stream` option takes a Duplex-like object; ServerSocket offers exactly the part pg uses
 * (connect, setNoDelay, setKeepAlive, write, end, destroy, ref, unref, writable and the events),
 * which the typings cannot express.
 */
export function streamOption(socket: ServerSocket): pg.ClientConfig['stream'] {
  return socket as unknown as pg.ClientConfig['stream'];
}

/**
 * What pg hands a submitted query object (a "submittable", as pg-cursor uses): its protocol
 * connection, an EventEmitter of the messages it parsed. sqlgate waits on `readyForQuery` (and
 * `end`) after an ErrorResponse, fails a COPY FROM STDIN with `sendCopyFail`, and reads the
 * `parameterDescription` that pg's client does not pass on (its submit() receives the connection).
 */
export interface SubmittableConnection {
  sendCopyFail(message: string): void;
  once(event: 'readyForQuery' | 'end', listener: () => void): void;
  off(event: 'readyForQuery' | 'end', listener: () => void): void;
  on(event: 'parameterDescription', listener: (message: ParameterDescription) => void): void;
  off(event: 'parameterDescription', listener: (message: ParameterDescription) => void): void;
}

/** pg's ParameterDescription message: the type OID of each parameter, `$1` first. */
export interface ParameterDescription {
  dataTypeIDs: number[];
}

/** Submits a query object to pg's queue; pg then calls its handle* methods as messages arrive. */
export function submit(client: pg.ClientBase, submittable: object): void {
  void client.query(submittable as unknown as pg.Submittable);
}

/**
 * Calls `settle` once the ReadyForQuery after an ErrorResponse arrives, or the connection ends:
 * pg lets go of a query with its error, so the query object hears of ReadyForQuery only here.
 */
export function afterReadyForQuery(connection: SubmittableConnection, settle: () => void): void {
  const once = (): void => {
    connection.off('readyForQuery', once);
    connection.off('end', once);
    settle();
  };
  connection.once('readyForQuery', once);
  connection.once('end', once);
}
