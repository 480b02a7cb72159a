/**
 * A statement that commits on its own, or a COMMIT, whose connection ended after it reached the
 * server may have committed: its error says the outcome is unknown (docs/decisions.md 10.5). Pure
 * core logic over the fake connections; the real server is in the HTTP tests
 * (lost-write-outcome.test.ts).
 */
import { ConnectionError, ErrorCodes } from '../../src/errors';
import { databaseError } from '../fakes/fake-connections';
import { harness } from './service-harness';

/** The adapter's mark: the connection failed after the round trip reached the server. */
const lostAfterSending = () =>
  new ConnectionError(ErrorCodes.CONNECTION_FAILED, 'Connection terminated', 'ECONNRESET', {
    statementMayHaveRun: true,
  });
/** PgBouncer's own report when its server connection broke. */
const poolerFatal = () => databaseError('08P01', 'server conn crashed?', { severity: 'FATAL' });

interface ErrorBody {
  error: { message: string; code: string; outcomeUnknown?: true };
}

it.each([
  ['COMMIT PREPARED, outside any transaction', "COMMIT PREPARED 'tx1'", lostAfterSending],
  ['ROLLBACK PREPARED', "ROLLBACK PREPARED 'tx1'", lostAfterSending],
  ['a write ended by a pooler’s FATAL', 'INSERT INTO t VALUES (1)', poolerFatal],
])(
  '%s: the outcome is unknown, and the status is a lost connection’s',
  async (_what, sql, fail) => {
    const { fake, query } = harness();
    fake.on(sql, { error: fail() });

    const response = await query(sql);

    const { error } = response.body as ErrorBody;
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toMatch(/committed is unknown/);
    expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
  },
);

it('a read without a volatile function ended by a FATAL failed plainly', async () => {
  const { fake, query } = harness();
  fake.on('SELECT 1', { error: poolerFatal() });

  const response = await query('SELECT 1');

  expect((response.body as ErrorBody).error.outcomeUnknown).toBeUndefined();
});

it('sqlgate’s own COMMIT ended by a FATAL: unknown, never rolled back', async () => {
  const { fake, query } = harness();
  fake.on('COMMIT', { error: poolerFatal() });

  const response = await query('INSERT INTO t VALUES (1); UPDATE t SET a = 2');

  expect(response.body).not.toHaveProperty('rolledBack', true);
  const { error } = response.body as ErrorBody;
  expect(error.outcomeUnknown).toBe(true);
  expect(error.message).toMatch(
    /^The connection was lost during COMMIT; whether the transaction committed is unknown/,
  );
  expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
});
