/**
 * What every ConnectionProvider must do, as core's strategies rely on it (src/ports/connections.ts).
 * The same suite runs against the in-memory fake (test/contract/fake.contract.test.ts) and against
 * the pg adapter on a real PostgreSQL (packages/postgres-adapter/test/contract.test.ts), so the
 * fake that core's unit tests use cannot drift from the adapter.
 *
 * The statements are plain SQL that PostgreSQL runs as written; the fake has no SQL engine, so its
 * test scripts each text in CONTRACT_SQL to answer as PostgreSQL does.
 */
import { ConnectionError, DatabaseError } from '../../src/errors';
import type {
  Connection,
  ConnectionProvider,
  ConnectionTarget,
  RunOptions,
} from '../../src/ports/connections';
import { orThrow } from '../../src/ports/settled';

/** The provider under test and where it connects. */
export interface PortUnderTest {
  provider: ConnectionProvider;
  target: ConnectionTarget;
  /** Another user's login to the same database, with a password of its own. */
  otherLogin: ConnectionTarget;
}

/**
 * Every statement the suite sends (besides BEGIN, COMMIT, ROLLBACK and the SET/SHOW of the session
 * test), so a fake can script them.
 */
export const CONTRACT_SQL = {
  /** Three rows of two int4 columns: n = 1..3, twice = 2n. */
  series: 'SELECT n, n * 2 AS twice FROM generate_series(1, 3) AS n',
  /** Ten rows of one int4 column n = 1..10. */
  tenRows: 'SELECT generate_series(1, 10) AS n',
  /** Echoes its bind parameter as int4 column `echoed`. */
  echo: 'SELECT $1::int AS echoed',
  one: 'SELECT 1 AS a',
  two: 'SELECT 2 AS b',
  /** 22012 division_by_zero. */
  divideByZero: 'SELECT 1/0',
  /** 42P01 undefined_table at position 15. */
  missingTable: 'SELECT * FROM contract_no_such_table',
  /** Runs for 30 s unless cancelled. */
  slow: 'SELECT pg_sleep(30)',
  setName: "SET application_name = 'port-contract'",
  showName: 'SHOW application_name',
} as const;

const objects: RunOptions = { rowMode: 'object', maxRows: 100 };

/**
 * Declares the contract tests for one provider. `open` is called before each test; the provider is
 * closed after it. It must lend one connection per target at a time (a pool of one), so the
 * session test gets back the connection it released.
 */
export function describeConnectionPortContract(name: string, open: () => PortUnderTest): void {
  describe(`${name}: the connection port contract`, () => {
    let port: PortUnderTest;
    const lent: Connection[] = [];

    beforeEach(() => {
      port = open();
    });
    afterEach(async () => {
      for (const connection of lent.splice(0)) connection.release({ destroy: true });
      await port.provider.close();
    });

    /** A connection that is destroyed after the test if the test did not release it. */
    async function acquire(): Promise<Connection> {
      const connection = await orThrow(port.provider.acquire(port.target));
      lent.push(connection);
      return connection;
    }

    function giveBack(
      connection: Connection,
      options?: { resetSession?: boolean; destroy?: boolean },
    ): void {
      lent.splice(lent.indexOf(connection), 1);
      connection.release(options);
    }

    it('run returns the command, rowCount, fields and rows', async () => {
      const connection = await acquire();
      const result = await orThrow(connection.run(CONTRACT_SQL.series, objects));
      expect(result).toMatchObject({ command: 'SELECT', rowCount: 3, truncated: false });
      expect(result.truncatedBy).toBeUndefined();
      expect(result.rows).toEqual([
        { n: 1, twice: 2 },
        { n: 2, twice: 4 },
        { n: 3, twice: 6 },
      ]);
      expect(result.fields.map((field) => [field.name, field.dataTypeName])).toEqual([
        ['n', 'int4'],
        ['twice', 'int4'],
      ]);
    });

    it('returns rows as arrays in array row mode and binds params', async () => {
      const connection = await acquire();
      const arrays = await orThrow(
        connection.run(CONTRACT_SQL.series, { rowMode: 'array', maxRows: 10 }),
      );
      expect(arrays.rows).toEqual([
        [1, 2],
        [2, 4],
        [3, 6],
      ]);
      const echoed = await orThrow(connection.run(CONTRACT_SQL.echo, { ...objects, params: [42] }));
      expect(echoed.rows).toEqual([{ echoed: 42 }]);
    });

    it('settles a refused statement with a DatabaseError that keeps code, severity and position; the connection stays usable', async () => {
      const connection = await acquire();
      const settled = await connection.run(CONTRACT_SQL.missingTable, objects);
      expect(settled.ok).toBe(false);
      const failure = settled.ok ? undefined : settled.error;
      expect(failure).toBeInstanceOf(DatabaseError);
      expect(failure).toMatchObject({
        sqlState: '42P01',
        failedStep: 'statement',
        fields: { code: '42P01', severity: 'ERROR', position: '15' },
      });
      expect((await orThrow(connection.run(CONTRACT_SQL.one, objects))).rows).toEqual([{ a: 1 }]);
      expect(connection.transactionStatus()).toBe('idle');
    });

    it('keeps at most maxRows rows and says the rows limit cut them', async () => {
      const connection = await acquire();
      const result = await orThrow(
        connection.run(CONTRACT_SQL.tenRows, {
          ...objects,
          maxRows: 3,
          stopEarly: [true],
        }),
      );
      expect(result.rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(result).toMatchObject({ truncated: true, truncatedBy: 'rows' });
    });

    it('runs a statement that may not stop early to completion: the command tag counts every row', async () => {
      const connection = await acquire();
      const result = await orThrow(
        connection.run(CONTRACT_SQL.tenRows, {
          ...objects,
          maxRows: 3,
          stopEarly: [false],
        }),
      );
      expect(result).toMatchObject({
        command: 'SELECT',
        rowCount: 10,
        truncated: true,
        truncatedBy: 'rows',
      });
      expect(result.rows).toHaveLength(3);
    });

    it('runBatch returns one result per statement, in order', async () => {
      const connection = await acquire();
      const batch = await connection.runBatch([CONTRACT_SQL.one, CONTRACT_SQL.two], {
        ...objects,
        before: ['BEGIN READ ONLY'],
        after: ['COMMIT'],
      });
      expect(batch.error).toBeUndefined();
      expect(batch.results.map((result) => result.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
      expect(connection.transactionStatus()).toBe('idle');
    });

    it('runBatch stops at the first failing statement: results before it, the error, nothing after', async () => {
      const connection = await acquire();
      const batch = await connection.runBatch(
        [CONTRACT_SQL.one, CONTRACT_SQL.divideByZero, CONTRACT_SQL.two],
        { ...objects, before: ['BEGIN'], after: ['COMMIT'] },
      );
      expect(batch.results.map((result) => result.rows)).toEqual([[{ a: 1 }]]);
      expect(batch.error).toBeInstanceOf(DatabaseError);
      expect(batch.error).toMatchObject({ sqlState: '22012', failedStep: 'statement' });
      // COMMIT did not run: the transaction is still there, failed.
      expect(connection.transactionStatus()).toBe('failed');
      await orThrow(connection.run('ROLLBACK', objects));
      expect(connection.transactionStatus()).toBe('idle');
    });

    it("runBatch reports a failing control statement after the statements as failedStep 'after'", async () => {
      const connection = await acquire();
      // A failing COMMIT needs deferred constraints; any failing control statement shows the step.
      const batch = await connection.runBatch([CONTRACT_SQL.one], {
        ...objects,
        before: ['BEGIN'],
        after: [CONTRACT_SQL.divideByZero, 'COMMIT'],
      });
      expect(batch.results.map((result) => result.rows)).toEqual([[{ a: 1 }]]);
      expect(batch.error).toMatchObject({ sqlState: '22012', failedStep: 'after' });
      // The COMMIT after the failure did not run.
      expect(connection.transactionStatus()).toBe('failed');
      await orThrow(connection.run('ROLLBACK', objects));
    });

    it("runBatch reports a failing control statement before the statements as failedStep 'before'", async () => {
      const connection = await acquire();
      const batch = await connection.runBatch([CONTRACT_SQL.one], {
        ...objects,
        before: [CONTRACT_SQL.divideByZero],
      });
      expect(batch.results).toEqual([]);
      expect(batch.error).toMatchObject({ sqlState: '22012', failedStep: 'before' });
    });

    it('reports the transaction status after BEGIN, COMMIT, a failed statement and ROLLBACK', async () => {
      const connection = await acquire();
      expect(connection.transactionStatus()).toBe('idle');
      await orThrow(connection.run('BEGIN', objects));
      expect(connection.transactionStatus()).toBe('in-transaction');
      await orThrow(connection.run('COMMIT', objects));
      expect(connection.transactionStatus()).toBe('idle');
      await orThrow(connection.run('BEGIN', objects));
      await expect(
        orThrow(connection.run(CONTRACT_SQL.divideByZero, objects)),
      ).rejects.toBeInstanceOf(DatabaseError);
      expect(connection.transactionStatus()).toBe('failed');
      // A failed transaction refuses everything but its end.
      await expect(orThrow(connection.run(CONTRACT_SQL.one, objects))).rejects.toMatchObject({
        sqlState: '25P02',
      });
      await orThrow(connection.run('ROLLBACK', objects));
      expect(connection.transactionStatus()).toBe('idle');
    });

    it('release with resetSession leaves no session setting and no transaction for the next acquire', async () => {
      const first = await acquire();
      await orThrow(first.run(CONTRACT_SQL.setName, objects));
      expect((await orThrow(first.run(CONTRACT_SQL.showName, objects))).rows).toEqual([
        { application_name: 'port-contract' },
      ]);
      await orThrow(first.run('BEGIN', objects));
      giveBack(first, { resetSession: true });

      const next = await acquire();
      expect(next.transactionStatus()).toBe('idle');
      const shown = await orThrow(next.run(CONTRACT_SQL.showName, objects));
      expect(shown.rows).not.toEqual([{ application_name: 'port-contract' }]);
    });

    it('lends a working connection after one was released with destroy', async () => {
      const first = await acquire();
      giveBack(first, { destroy: true });
      const next = await acquire();
      expect((await orThrow(next.run(CONTRACT_SQL.one, objects))).rows).toEqual([{ a: 1 }]);
    });

    it('cancel stops the running statement with 57014', async () => {
      const connection = await acquire();
      const running = orThrow(connection.run(CONTRACT_SQL.slow, objects));
      // Cancelling before the statement reached the server would cancel nothing: wait a little.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await connection.cancel();
      await expect(running).rejects.toMatchObject({ sqlState: '57014' });
      expect((await orThrow(connection.run(CONTRACT_SQL.one, objects))).rows).toEqual([{ a: 1 }]);
    });

    it('settles acquire with a ConnectionError when the signal has already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const settled = await port.provider.acquire(port.target, { signal: controller.signal });
      expect(settled.ok).toBe(false);
      expect(!settled.ok && settled.error).toBeInstanceOf(ConnectionError);
    });

    it('names a scope per database and user without revealing the password', async () => {
      const scope = await orThrow(port.provider.scopeOf(port.target));
      const other = await orThrow(port.provider.scopeOf(port.otherLogin));
      for (const password of [port.target.password, port.otherLogin.password]) {
        expect(password).toBeDefined();
        expect(JSON.stringify([scope, other])).not.toContain(password);
      }
      expect(other.credentials).not.toBe(scope.credentials);
      expect(other.database).toBe(scope.database);
    });
  });
}
