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
 * pg's `stream` option takes a Duplex-like object; ServerSocket offers the part pg uses, which the
 * typings cannot express.
 */
export function streamOption(socket: ServerSocket): pg.ClientConfig['stream'] {
  return socket as unknown as pg.ClientConfig['stream'];
}
