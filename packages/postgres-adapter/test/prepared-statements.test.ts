/**
 * Named prepared statements of reads, per connection (docs/decisions.md 10.30), against a
 * real PostgreSQL. What a connection holds is read from pg_prepared_statements on that same
 * connection, in a later round trip that names nothing itself; a statement run through its name
 * counts one more generic or custom plan there, which no new Parse would.
 *
 * The adapter trusts core's flags: `nameable` (reads without string literals, outside sessions)
 * and stopEarly (reads that call no volatile or unknown function and read no relation,
 * docs/decisions.md 10.4). Tests set the flags themselves, as core would.
 */
import { randomBytes } from 'node:crypto';
import {
  orThrow,
  type Connection,
  type ConnectionTarget,
  type ResultBudget,
  type RowSink,
  type RunOptions,
} from '@sqlgate/core';
import { failureOf, testTarget } from './support';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { MAX_PREPARED_STATEMENTS, statementName } from '../src/prepared-statements';

const target: ConnectionTarget = testTarget();
/** What core sends for a read proven free of side effects. */
const read: RunOptions = { rowMode: 'object', maxRows: 100, stopEarly: [true], nameable: [true] };
/** What core sends for anything else. */
const other: RunOptions = { rowMode: 'object', maxRows: 100 };

let connections: PostgresConnections;
beforeEach(() => {
  // One connection per pool: every acquire lends the same one.
  connections = createPostgresConnections({ max: 1 });
});
afterEach(() => connections.close());

/** A name no other test (or test file, sharing the database) uses. */
function unique(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

async function withConnection<T>(work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await orThrow(connections.acquire(target));
  try {
    return await work(connection);
  } finally {
    connection.release();
  }
}

/** sqlgate's statements on the connection: name, text and how often each ran by name. */
async function preparedOn(
  connection: Connection,
): Promise<{ name: string; statement: string; runs: number }[]> {
  const result = await orThrow(
    connection.run(
      `SELECT name, statement, (generic_plans + custom_plans)::int AS runs
         FROM pg_prepared_statements WHERE NOT from_sql ORDER BY prepare_time, name`,
      other,
    ),
  );
  return result.rows as { name: string; statement: string; runs: number }[];
}

async function rowsOf(connection: Connection, sql: string, options: RunOptions = read) {
  return (await orThrow(connection.run(sql, options))).rows;
}

it('sends a repeated proven read without Parse: the statement prepared the first time runs again', async () => {
  await withConnection(async (connection) => {
    for (let run = 0; run < 3; run++) {
      expect(await rowsOf(connection, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    }
    // One statement, run three times by its name: the second and third sent no Parse.
    expect(await preparedOn(connection)).toEqual([
      { name: statementName('SELECT 1 AS one'), statement: 'SELECT 1 AS one', runs: 3 },
    ]);
  });
});

it('answers with the new column after ALTER TABLE between two runs of a prepared SELECT *', async () => {
  const table = unique('prep_alter');
  await withConnection(async (connection) => {
    await orThrow(connection.run(`CREATE TABLE ${table} (a int)`, other));
    try {
      await orThrow(connection.run(`INSERT INTO ${table} VALUES (1)`, other));
      const select = `SELECT * FROM ${table}`;
      expect(await rowsOf(connection, select)).toEqual([{ a: 1 }]);
      expect(await rowsOf(connection, select)).toEqual([{ a: 1 }]);
      await orThrow(connection.run(`ALTER TABLE ${table} ADD COLUMN b int DEFAULT 2`, other));
      // The prepared statement's result type changed (0A000): sent again unnamed, transparently.
      const result = await orThrow(connection.run(select, read));
      expect(result.rows).toEqual([{ a: 1, b: 2 }]);
      expect(result.fields.map((field) => field.name)).toEqual(['a', 'b']);
      // A changed table is no reason to stop naming statements: the text is prepared anew.
      expect(await rowsOf(connection, select)).toEqual([{ a: 1, b: 2 }]);
      expect((await preparedOn(connection)).map((row) => row.statement)).toEqual([select]);
    } finally {
      await orThrow(connection.run(`DROP TABLE ${table}`, other));
    }
  });
});

it('sends a round trip with BEGIN READ ONLY again after a stale statement, rolled back first, its rows counted once', async () => {
  const table = unique('prep_batch');
  await withConnection(async (connection) => {
    await orThrow(connection.run(`CREATE TABLE ${table} (a int)`, other));
    try {
      await orThrow(connection.run(`INSERT INTO ${table} VALUES (1), (2)`, other));
      const texts = ['SELECT 1 AS one', `SELECT * FROM ${table} ORDER BY a`];
      // As the parallel-read path sends a read (docs/decisions.md 2.2).
      const batch = (budget: ResultBudget) =>
        connection.runBatch(texts, {
          ...read,
          stopEarly: [true, true],
          before: ['BEGIN READ ONLY'],
          after: ['COMMIT'],
          budget,
        });
      expect((await batch({ remainingBytes: 10_000 })).error).toBeUndefined();
      await orThrow(connection.run(`ALTER TABLE ${table} ADD COLUMN b text DEFAULT 'x'`, other));

      // The first statement ran and kept its rows before the second one's Bind failed.
      const budget = { remainingBytes: 10_000 };
      const { results, error } = await batch(budget);
      expect(error).toBeUndefined();
      expect(results.map((result) => result.rows)).toEqual([
        [{ one: 1 }],
        [
          { a: 1, b: 'x' },
          { a: 2, b: 'x' },
        ],
      ]);
      for (const result of results) expect(result.durationMs).toEqual(expect.any(Number));
      expect(connection.transactionStatus()).toBe('idle');
      // The budget paid for the rows returned, not for those of the failed attempt too.
      const once = { remainingBytes: 10_000 };
      expect((await batch(once)).error).toBeUndefined();
      expect(budget.remainingBytes).toBe(once.remainingBytes);
    } finally {
      await orThrow(connection.run(`DROP TABLE ${table}`, other));
    }
  });
});

it('streams a stale prepared read once: the failed Bind sent the consumer nothing; several streamed reads are never named', async () => {
  const table = unique('prep_stream');
  await withConnection(async (connection) => {
    await orThrow(connection.run(`CREATE TABLE ${table} (a int)`, other));
    try {
      await orThrow(connection.run(`INSERT INTO ${table} VALUES (1), (2)`, other));
      const select = `SELECT * FROM ${table} ORDER BY a`;
      await rowsOf(connection, select);
      await rowsOf(connection, select);
      await orThrow(connection.run(`ALTER TABLE ${table} ADD COLUMN b int DEFAULT 3`, other));
      const events: unknown[] = [];
      const sink: RowSink = {
        describe: (at, fields) => events.push(['describe', at, fields.map((f) => f.name)]),
        row: (at, row) => events.push(['row', at, row]) > 0,
        drained: () => Promise.resolve(),
        complete: (at, result) => events.push(['complete', at, result.rowCount]),
      };
      expect(
        (await connection.runBatch([select], { ...read, rowSink: sink })).error,
      ).toBeUndefined();
      expect(events).toEqual([
        ['describe', 0, ['a', 'b']],
        ['row', 0, { a: 1, b: 3 }],
        ['row', 0, { a: 2, b: 3 }],
        ['complete', 0, 2],
      ]);

      // Two statements prepared, the second made stale: had they been named, the first one's
      // rows, already with the consumer, would have been streamed again.
      const pair = ['SELECT 1 AS one', select];
      await orThrow(connection.run(`ALTER TABLE ${table} DROP COLUMN b`, other));
      for (let run = 0; run < 2; run++) {
        expect(
          (await connection.runBatch(pair, { ...read, stopEarly: [true, true] })).error,
        ).toBeUndefined();
      }
      await orThrow(connection.run(`ALTER TABLE ${table} ADD COLUMN c int DEFAULT 4`, other));
      events.length = 0;
      const streamed = { ...read, stopEarly: [true, true], rowSink: sink };
      expect((await connection.runBatch(pair, streamed)).error).toBeUndefined();
      expect(events).toEqual([
        ['describe', 0, ['one']],
        ['row', 0, { one: 1 }],
        ['complete', 0, 1],
        ['describe', 1, ['a', 'c']],
        ['row', 1, { a: 1, c: 4 }],
        ['row', 1, { a: 2, c: 4 }],
        ['complete', 1, 2],
      ]);
    } finally {
      await orThrow(connection.run(`DROP TABLE ${table}`, other));
    }
  });
});

it('answers a relation-free read whose type the search_path now resolves differently', async () => {
  const [first, second] = [unique('prep_s'), unique('prep_s')];
  await withConnection(async (connection) => {
    for (const sql of [
      `CREATE SCHEMA ${first}`,
      `CREATE DOMAIN ${first}.d AS int`,
      `CREATE SCHEMA ${second}`,
      `CREATE DOMAIN ${second}.d AS text`,
    ]) {
      await orThrow(connection.run(sql, other));
    }
    try {
      // As a session may (docs/decisions.md 10.26): SET, then reads core proves free of effects.
      await orThrow(connection.run(`SET search_path = ${first}`, other));
      const cast = "SELECT '7'::d AS v";
      expect(await rowsOf(connection, cast)).toEqual([{ v: 7 }]);
      expect(await rowsOf(connection, cast)).toEqual([{ v: 7 }]);
      await orThrow(connection.run(`SET search_path = ${second}`, other));
      expect(await rowsOf(connection, cast)).toEqual([{ v: '7' }]);
    } finally {
      await orThrow(connection.run('RESET search_path', other));
      await orThrow(connection.run(`DROP SCHEMA ${first}, ${second} CASCADE`, other));
    }
  });
});

it("forgets the connection's statements when a caller runs DEALLOCATE ALL, and prepares them again", async () => {
  await withConnection(async (connection) => {
    await rowsOf(connection, 'SELECT 2 AS two');
    await rowsOf(connection, 'SELECT 2 AS two');
    await orThrow(connection.run('/* comment */ deallocate ALL', other));
    expect(await rowsOf(connection, 'SELECT 2 AS two')).toEqual([{ two: 2 }]);
    // Known to be gone, prepared again: no failed Bind was needed, so naming goes on.
    expect(await preparedOn(connection)).toEqual([
      { name: statementName('SELECT 2 AS two'), statement: 'SELECT 2 AS two', runs: 1 },
    ]);
  });
});

it('answers a prepared read after a DO block deallocated every statement, prepared anew, and goes on naming', async () => {
  const three = 'SELECT 3 AS three';
  await withConnection(async (connection) => {
    await rowsOf(connection, three);
    await rowsOf(connection, three);
    await orThrow(connection.run(`DO $$ BEGIN EXECUTE 'DEALLOCATE ALL'; END $$`, other));
    // The Bind fails with 26000; the round trip is sent again with the statement parsed anew.
    expect(await rowsOf(connection, three)).toEqual([{ three: 3 }]);
    expect(await rowsOf(connection, three)).toEqual([{ three: 3 }]);
    expect(await preparedOn(connection)).toEqual([
      { name: statementName(three), statement: three, runs: 2 },
    ]);
  });
});

it("prepares its statement in place of a caller's own statement of the same name, and answers the read", async () => {
  const one = 'SELECT 1 AS one';
  await withConnection(async (connection) => {
    await orThrow(connection.run(`PREPARE "${statementName(one)}" AS SELECT 42 AS one`, other));
    // Parse of that name is refused with 42P05; the round trip is sent again with the name
    // closed and parsed anew: the name stands for the text it was made from, nothing else.
    expect(await rowsOf(connection, one)).toEqual([{ one: 1 }]);
    expect(await rowsOf(connection, one)).toEqual([{ one: 1 }]);
    expect(await preparedOn(connection)).toEqual([
      { name: statementName(one), statement: one, runs: 2 },
    ]);
  });
});

it('forgets the statements when the connection is cleaned with DISCARD ALL, and prepares them again', async () => {
  const first = await orThrow(connections.acquire(target));
  const pid = await rowsOf(first, 'SELECT pg_backend_pid() AS pid', other);
  await rowsOf(first, 'SELECT 5 AS five');
  await rowsOf(first, 'SELECT 5 AS five');
  first.release({ resetSession: true });
  await withConnection(async (connection) => {
    expect(await rowsOf(connection, 'SELECT pg_backend_pid() AS pid', other)).toEqual(pid);
    expect(await rowsOf(connection, 'SELECT 5 AS five')).toEqual([{ five: 5 }]);
    expect(await preparedOn(connection)).toEqual([
      { name: statementName('SELECT 5 AS five'), statement: 'SELECT 5 AS five', runs: 1 },
    ]);
  });
});

it('keeps at most MAX_PREPARED_STATEMENTS per connection, closing the least recently used', async () => {
  await withConnection(async (connection) => {
    for (let n = 0; n < 150; n++) {
      expect(await rowsOf(connection, `SELECT ${n} AS n`)).toEqual([{ n }]);
    }
    const held = await preparedOn(connection);
    expect(held).toHaveLength(MAX_PREPARED_STATEMENTS);
    expect(held.map((row) => row.statement)).toEqual(
      Array.from({ length: MAX_PREPARED_STATEMENTS }, (_, i) => `SELECT ${i + 50} AS n`),
    );
    // One round trip of 150 new texts names no more than the bound: while it runs, the server
    // holds the 100 statements from before and at most 100 new ones.
    const texts = [
      ...Array.from({ length: 150 }, (_, n) => `SELECT ${n} AS m`),
      'SELECT count(*)::int AS held FROM pg_prepared_statements',
    ];
    const batch = await connection.runBatch(texts, {
      ...read,
      stopEarly: texts.map(() => true),
      nameable: texts.map(() => true),
    });
    expect(batch.error).toBeUndefined();
    expect(batch.results.slice(0, 150).map((result) => result.rows)).toEqual(
      texts.slice(0, 150).map((_, m) => [{ m }]),
    );
    expect(batch.results[150]?.rows).toEqual([{ held: 2 * MAX_PREPARED_STATEMENTS }]);
    expect(await preparedOn(connection)).toHaveLength(MAX_PREPARED_STATEMENTS);
  });
});

it('never names a write, a round trip mixing a read with a write, or a read inside a transaction', async () => {
  const table = unique('prep_write');
  await withConnection(async (connection) => {
    await orThrow(connection.run(`CREATE TABLE ${table} (a int)`, other));
    try {
      for (let run = 0; run < 2; run++) {
        await orThrow(
          connection.run(`INSERT INTO ${table} VALUES (1)`, { ...other, stopEarly: [false] }),
        );
        const mixed = await connection.runBatch(['SELECT 1 AS one', `DELETE FROM ${table}`], {
          ...other,
          stopEarly: [true, false],
        });
        expect(mixed.error).toBeUndefined();
      }
      expect(await preparedOn(connection)).toEqual([]);

      // A caller's transaction (a session's BEGIN): the connection is not idle.
      await orThrow(connection.run('BEGIN', other));
      expect(await rowsOf(connection, 'SELECT 6 AS six')).toEqual([{ six: 6 }]);
      expect(await rowsOf(connection, 'SELECT 6 AS six')).toEqual([{ six: 6 }]);
      expect(await preparedOn(connection)).toEqual([]);
      await orThrow(connection.run('ROLLBACK', other));
    } finally {
      await orThrow(connection.run(`DROP TABLE ${table}`, other));
    }
  });
});

it('names a lone read of a relation, but not a read of a relation followed by another statement', async () => {
  const table = unique('prep_relation');
  /** What core sends for a read of a relation: not proven free of side effects, but a read. */
  const relationRead: RunOptions = { ...other, stopEarly: [false], nameable: [true] };
  await withConnection(async (connection) => {
    await orThrow(connection.run(`CREATE TABLE ${table} (a int)`, other));
    await orThrow(connection.run(`INSERT INTO ${table} VALUES (7)`, other));
    try {
      const sql = `SELECT a FROM ${table}`;
      expect(await rowsOf(connection, sql, relationRead)).toEqual([{ a: 7 }]);
      expect(await rowsOf(connection, sql, relationRead)).toEqual([{ a: 7 }]);
      // Before another statement, it would run again if that one's name made the round trip fail.
      const two = await connection.runBatch([sql, 'SELECT 1 AS one'], {
        ...other,
        stopEarly: [false, true],
        nameable: [true, true],
      });
      expect(two.error).toBeUndefined();
      expect(await preparedOn(connection)).toEqual([
        { name: statementName(sql), statement: sql, runs: 2 },
      ]);

      // A changed result type under the lone read: answered with the new column, no error.
      await orThrow(connection.run(`ALTER TABLE ${table} ADD COLUMN b int DEFAULT 8`, other));
      expect(await rowsOf(connection, `SELECT * FROM ${table}`, relationRead)).toEqual([
        { a: 7, b: 8 },
      ]);
      await orThrow(connection.run(`ALTER TABLE ${table} DROP COLUMN b`, other));
      expect(await rowsOf(connection, `SELECT * FROM ${table}`, relationRead)).toEqual([{ a: 7 }]);
    } finally {
      await orThrow(connection.run(`DROP TABLE ${table}`, other));
    }
  });
});

it('binds each run its own parameter values', async () => {
  await withConnection(async (connection) => {
    const sql = 'SELECT $1::int * 2 AS doubled';
    for (const value of [1, 2, 3]) {
      expect(await rowsOf(connection, sql, { ...read, params: [value] })).toEqual([
        { doubled: value * 2 },
      ]);
    }
    expect(await preparedOn(connection)).toEqual([
      { name: statementName(sql), statement: sql, runs: 3 },
    ]);
  });
});

it('stops a prepared read at each run’s own maxRows and says it was truncated', async () => {
  await withConnection(async (connection) => {
    const sql = 'SELECT generate_series(1, 1000) AS n';
    for (const maxRows of [3, 3, 5, 5]) {
      const result = await orThrow(connection.run(sql, { ...read, maxRows }));
      expect(result.rows).toEqual(Array.from({ length: maxRows }, (_, i) => ({ n: i + 1 })));
      expect(result).toMatchObject({ truncated: true, truncatedBy: 'rows' });
    }
    expect(await preparedOn(connection)).toEqual([
      { name: statementName(sql), statement: sql, runs: 4 },
    ]);
  });
});

it('reports a prepared read’s own error, and runs it again afterwards', async () => {
  await withConnection(async (connection) => {
    // Divided while it runs, not while it is planned (a constant would be folded at planning).
    const sql = 'SELECT 1 / n AS q FROM generate_series($1::int, $1::int) AS n';
    expect(await rowsOf(connection, sql, { ...read, params: [1] })).toEqual([{ q: 1 }]);
    expect(await failureOf(connection.run(sql, { ...read, params: [0] }))).toMatchObject({
      fields: { code: '22012' },
    });
    expect(await rowsOf(connection, sql, { ...read, params: [1] })).toEqual([{ q: 1 }]);
    expect(await preparedOn(connection)).toEqual([
      { name: statementName(sql), statement: sql, runs: 3 },
    ]);
  });
});

it('names nothing when the option is off', async () => {
  const off = createPostgresConnections({ max: 1, preparedStatements: false });
  try {
    const connection = await orThrow(off.acquire(target));
    try {
      await rowsOf(connection, 'SELECT 7 AS seven');
      await rowsOf(connection, 'SELECT 7 AS seven');
      expect(await preparedOn(connection)).toEqual([]);
    } finally {
      connection.release();
    }
  } finally {
    await off.close();
  }
});
