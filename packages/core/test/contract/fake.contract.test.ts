/**
 * The in-memory fake passes the connection port contract, so core's unit tests built on it rely on
 * nothing the pg adapter does not also do.
 */
import { databaseError, fakeTarget, FakeConnectionProvider } from '../fakes/fake-connections';
import { CONTRACT_SQL, describeConnectionPortContract } from './connection-port-contract';

/**
 * The fake has no SQL engine: each contract statement is scripted to answer as PostgreSQL does.
 * Transaction status, 25P02 in a failed transaction, SET/SHOW/DISCARD ALL, stopping at the first
 * error and cancelling a running statement are the fake's own behaviour, not scripted here.
 */
function scriptedLikePostgres(): FakeConnectionProvider {
  const tenRows = Array.from({ length: 10 }, (_, index) => ({ n: index + 1 }));
  return new FakeConnectionProvider()
    .on(CONTRACT_SQL.series, {
      rows: [1, 2, 3].map((n) => ({ n, twice: n * 2 })),
    })
    .on(CONTRACT_SQL.tenRows, { rows: tenRows })
    .on(CONTRACT_SQL.echo, (_sql, options) => ({ rows: [{ echoed: Number(options.params?.[0]) }] }))
    .on(CONTRACT_SQL.one, { rows: [{ a: 1 }] })
    .on(CONTRACT_SQL.two, { rows: [{ b: 2 }] })
    .on(CONTRACT_SQL.divideByZero, { error: databaseError('22012', 'division by zero') })
    .on(CONTRACT_SQL.missingTable, {
      error: databaseError('42P01', 'relation "contract_no_such_table" does not exist', {
        position: '15',
      }),
    })
    .on(CONTRACT_SQL.slow, { delayMs: 30_000, columns: ['pg_sleep'], rows: [['']] });
}

describeConnectionPortContract('the fake provider', () => ({
  provider: scriptedLikePostgres(),
  target: fakeTarget,
  otherLogin: { ...fakeTarget, user: 'someone_else', password: 'contract-secret' },
}));
