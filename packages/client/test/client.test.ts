/**
 * @sqlgate/client against sqlgate's real server and a real PostgreSQL: the query function (template,
 * fragments, unsafe text, options), values sent as node-postgres sends them, batches, begin() on a
 * session, streams, an AbortSignal that stops the statement in PostgreSQL, errors with their
 * fields, the pg-compatible Pool, and a bundle that imports nothing from Node.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { eventually, testDatabaseFromEnvironment } from '@sqlgate/testing';
import { createServiceFromConfig, loadConfig, startServer } from '@sqlgate/http-express';
import type { QueryService } from '@sqlgate/core';
import { Cursor, Pool, sqlgate, SqlgateError, type Sql } from '@sqlgate/client';

const database = testDatabaseFromEnvironment();
const connectionString =
  `postgresql://${encodeURIComponent(database.user)}:${encodeURIComponent(database.password ?? '')}` +
  `@${database.host}:${database.port}/${encodeURIComponent(database.database)}`;

let service: QueryService;
let server: Awaited<ReturnType<typeof startServer>>;
let sql: Sql;
let direct: Client;

beforeAll(async () => {
  service = createServiceFromConfig(loadConfig({}));
  server = await startServer({ port: 0, hostname: '127.0.0.1', service });
  sql = sqlgate({ url: server.url, connectionString });
  direct = new Client({ connectionString });
  await direct.connect();
  await direct.query(
    'DROP TABLE IF EXISTS client_t; CREATE TABLE client_t (id int PRIMARY KEY, note text)',
  );
});
afterAll(async () => {
  await direct.end();
  await server.close();
});

/** Whether a statement whose text holds `marker` is running in PostgreSQL now. */
async function running(marker: string): Promise<boolean> {
  const { rows } = await direct.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1",
    [`%${marker}%`],
  );
  return (rows[0] as { n: number }).n > 0;
}

describe('the query function', () => {
  it('runs tagged templates, inlining fragments and unsafe text, and binding every other value', async () => {
    const column = sql.unsafe('note');
    const where = sql`WHERE g > ${1}`;
    const rows =
      await sql`SELECT g, ${'x'}::text AS ${column} FROM generate_series(1, 3) g ${where}`;
    expect(rows).toEqual([
      { g: 2, note: 'x' },
      { g: 3, note: 'x' },
    ]);
  });

  it('gives full results and array rows on request, and parses by OID with overrides', async () => {
    const full = await sql.query('SELECT 1::int8 AS a, 2 AS a', [], {
      fullResults: true,
      arrayMode: true,
    });
    expect(full).toMatchObject({
      command: 'SELECT',
      rowCount: 1,
      rowAsArray: true,
      rows: [['1', 2]],
    });
    const overridden = await sql.query('SELECT 1::int8 AS big', [], { types: { 20: BigInt } });
    expect(overridden).toEqual([{ big: 1n }]);
  });

  it('sends an interval it read back as the same interval, as pg does', async () => {
    const [read] = (await sql`SELECT '1 year 2 mons 3 days 04:05:06.789'::interval AS i`) as {
      i: object;
    }[];
    const [back] = (await sql`SELECT ${(read as { i: object }).i}::interval::text AS i`) as {
      i: string;
    }[];
    expect(back).toEqual({ i: '1 year 2 mons 3 days 04:05:06.789' });
  });

  it('sends values as node-postgres sends them', async () => {
    const values = [
      new Date(Date.UTC(2024, 1, 29, 12, 30, 45, 123)),
      ['a', 'b,"c"', null, ['nested\\']],
      { k: [1, 'two'] },
      null,
      42n,
      true,
    ];
    const texts = 'SELECT ' + values.map((_, i) => `$${i + 1}::text AS v${i}`).join(', ');
    const [mine] = (await sql.query(texts, values)) as Record<string, unknown>[];
    const { rows } = await direct.query(texts, values as unknown[]);
    expect(mine).toEqual(rows[0]);
    // Bytes: pg sends them in binary, the client as bytea's hex text; PostgreSQL reads the same.
    const bytes = new Uint8Array([0, 1, 92, 254, 255]);
    const [read] = (await sql.query('SELECT $1::bytea AS b', [bytes])) as { b: Uint8Array }[];
    expect([...(read as { b: Uint8Array }).b]).toEqual([...bytes]);
  });

  it('runs a batch in one transaction: all or nothing, with its options', async () => {
    const results = await sql.transaction([
      sql`INSERT INTO client_t VALUES (1, 'one')`,
      sql`SELECT note FROM client_t WHERE id = 1`,
    ]);
    expect(results[1]).toEqual([{ note: 'one' }]);
    await expect(
      sql.transaction((tx) => [tx`INSERT INTO client_t VALUES (2, 'two')`, tx`SELECT 1 / 0`]),
    ).rejects.toMatchObject({ code: '22012', status: 400 });
    expect((await direct.query('SELECT * FROM client_t WHERE id = 2')).rows).toEqual([]);
    await expect(
      sql.transaction([sql`INSERT INTO client_t VALUES (3, 'three')`], { readOnly: true }),
    ).rejects.toMatchObject({ code: '25006' });
  });

  it("throws SqlgateError with the fields PostgreSQL sent, and sqlgate's own refusals", async () => {
    const error = (await sql`SELECT * FROM client_missing`.then(
      () => undefined,
      (failure: unknown) => failure,
    )) as SqlgateError;
    expect(error).toBeInstanceOf(SqlgateError);
    expect(error).toMatchObject({ code: '42P01', position: '15', severity: 'ERROR', status: 400 });
    await expect(sql.query('SELECT 1; SELECT 2')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    const nowhere = sqlgate({ url: 'http://127.0.0.1:9', connectionString });
    await expect(nowhere`SELECT 1`).rejects.toMatchObject({
      name: 'SqlgateError',
      status: undefined,
    });
  });

  it('stops the statement in PostgreSQL when its AbortSignal is aborted', async () => {
    const controller = new AbortController();
    const call = sql.query('SELECT pg_sleep(60) AS client_abort_victim', [], {
      signal: controller.signal,
    });
    const settled = call.then(
      () => 'resolved',
      (error: unknown) => (error as Error).name,
    );
    await eventually(async () => expect(await running('client_abort_victim')).toBe(true));
    controller.abort();
    expect(await settled).toBe('AbortError');
    await eventually(async () => expect(await running('client_abort_victim')).toBe(false));
  });
});

describe('begin()', () => {
  it('commits what the work did when it returns, unseen by others before', async () => {
    const seenBefore = await sql.begin(async (tx) => {
      await tx`INSERT INTO client_t VALUES (10, 'in a transaction')`;
      expect(await tx`SELECT note FROM client_t WHERE id = 10`).toEqual([
        { note: 'in a transaction' },
      ]);
      return (await direct.query('SELECT * FROM client_t WHERE id = 10')).rows.length;
    });
    expect(seenBefore).toBe(0);
    expect((await direct.query('SELECT note FROM client_t WHERE id = 10')).rows).toEqual([
      { note: 'in a transaction' },
    ]);
    expect(service.sessionStatistics().open).toBe(0);
  });

  it('rolls back when the work throws, and ends its session', async () => {
    await expect(
      sql.begin(async (tx) => {
        await tx`INSERT INTO client_t VALUES (11, 'never')`;
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await direct.query('SELECT * FROM client_t WHERE id = 11')).rows).toEqual([]);
    expect(service.sessionStatistics().open).toBe(0);
  });

  it('begins at the level asked', async () => {
    const level = await sql.begin((tx) => tx`SHOW transaction_isolation`, {
      isolationLevel: 'Serializable',
      readOnly: true,
    });
    expect(level).toEqual([{ transaction_isolation: 'serializable' }]);
  });
});

describe('begin(), as a hostile caller would use it', () => {
  it('rolls back what ran when its signal is aborted mid-way, and stops the running statement', async () => {
    const controller = new AbortController();
    const transaction = sql.begin(
      async (tx) => {
        await tx`INSERT INTO client_t VALUES (20, 'before the abort')`;
        await tx`SELECT pg_sleep(60) AS client_begin_victim`;
        await tx`INSERT INTO client_t VALUES (21, 'after the abort')`;
      },
      { signal: controller.signal },
    );
    const settled = transaction.then(
      () => 'committed',
      (error: unknown) => (error as Error).name,
    );
    await eventually(async () => expect(await running('client_begin_victim')).toBe(true));
    controller.abort();
    expect(await settled).toBe('AbortError');
    await eventually(async () => expect(await running('client_begin_victim')).toBe(false));
    expect((await direct.query('SELECT * FROM client_t WHERE id IN (20, 21)')).rows).toEqual([]);
    await eventually(() => expect(service.sessionStatistics().open).toBe(0));
  });

  it('fails when a statement failed and the work went on: COMMIT rolled it all back', async () => {
    await expect(
      sql.begin(async (tx) => {
        await tx`INSERT INTO client_t VALUES (22, 'kept?')`;
        await tx`SELECT 1 / 0`.catch(() => 'caught and ignored');
        return 'the work returned';
      }),
    ).rejects.toMatchObject({ code: '25P02', message: expect.stringMatching(/rolled it back/) });
    expect((await direct.query('SELECT * FROM client_t WHERE id = 22')).rows).toEqual([]);
  });

  it('sends statements made together one after the other, in the order they were made', async () => {
    const notes = await sql.begin(async (tx) => {
      await Promise.all([
        tx`INSERT INTO client_t VALUES (23, 'first')`,
        tx`INSERT INTO client_t VALUES (24, 'second')`,
        tx`UPDATE client_t SET note = note || ' then updated' WHERE id = 23`,
      ]);
      return tx`SELECT note FROM client_t WHERE id IN (23, 24) ORDER BY id`;
    });
    expect(notes).toEqual([{ note: 'first then updated' }, { note: 'second' }]);
  });

  it('refuses misuse with a clear error rather than broken SQL', () => {
    expect(() => (sql as unknown as (text: string) => unknown)('SELECT 1')).toThrow(
      /tagged template/,
    );
    expect(() => sql.query('SELECT 1', [], { authToken: 'x' } as object)).toThrow(/authToken/);
    return expect(sql.transaction(['SELECT 1'] as never)).rejects.toThrow(/list of queries/);
  });

  it("says when the server's session limit is reached, with its code", async () => {
    const limited = await startServer({ port: 0, hostname: '127.0.0.1', maxSessions: 1 });
    try {
      const tight = sqlgate({ url: limited.url, connectionString });
      let release!: () => void;
      const held = tight.begin(() => new Promise<void>((resolve) => (release = resolve)));
      await eventually(() => expect(release).toBeDefined());
      await expect(tight.begin(async () => 'second')).rejects.toMatchObject({
        status: 503,
        code: 'SESSION_LIMIT',
      });
      release();
      await held;
    } finally {
      await limited.close();
    }
  });
});

describe('stream()', () => {
  it('yields rows as they arrive, and leaving early stops the statement', async () => {
    let taken = 0;
    // Far more rows than a client takes at once: PostgreSQL is still producing them when the loop
    // is left.
    for await (const row of sql.stream(
      'SELECT g AS client_stream_victim FROM generate_series(1, 100000000) g',
    )) {
      expect(row).toEqual({ client_stream_victim: taken + 1 });
      taken++;
      if (taken === 2) {
        expect(await running('client_stream_victim')).toBe(true);
        break;
      }
    }
    expect(taken).toBe(2);
    await eventually(async () => expect(await running('client_stream_victim')).toBe(false));
  });

  it('throws the failure reported in the stream', async () => {
    const rows: unknown[] = [];
    await expect(
      (async () => {
        for await (const row of sql.stream(
          'SELECT 1 / (g - 2) AS x FROM generate_series(1, 3) g',
          [],
          {
            arrayMode: true,
          },
        ))
          rows.push(row);
      })(),
    ).rejects.toMatchObject({ code: '22012' });
    expect(rows).toEqual([[-1]]);
  });
});

describe('the pg-compatible Pool', () => {
  it('answers pg result shapes, config objects, rowMode, types and callbacks', async () => {
    const pool = new Pool({ url: server.url, connectionString });
    const result = await pool.query('SELECT $1::int AS n', [5]);
    expect(result).toMatchObject({ command: 'SELECT', rowCount: 1, rows: [{ n: 5 }] });
    expect(result.fields[0]).toMatchObject({ name: 'n', dataTypeID: 23 });
    const arrays = await pool.query({
      text: 'SELECT $1::int8 AS big',
      values: ['7'],
      rowMode: 'array',
      types: { getTypeParser: () => (text: string) => `parsed ${text}` },
    });
    expect(arrays.rows).toEqual([['parsed 7']]);
    const viaCallback = await new Promise((resolve, reject) =>
      pool.query('SELECT 1 AS one', (error: Error | null, answer?: { rows: unknown[] }) =>
        error ? reject(error) : resolve(answer?.rows),
      ),
    );
    expect(viaCallback).toEqual([{ one: 1 }]);
    await pool.end();
    await expect(pool.query('SELECT 1')).rejects.toThrow(/after calling end/);
  });

  it("waits past max for a client to be released, and answers pg's callback style", async () => {
    const pool = new Pool({ url: server.url, connectionString, max: 1 });
    const first = await pool.connect();
    let second: unknown;
    pool.connect((error, client, release) => {
      second = error ?? client;
      release?.();
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect({ second, waiting: pool.waitingCount, total: pool.totalCount }).toEqual({
      second: undefined,
      waiting: 1,
      total: 1,
    });
    first.release();
    await eventually(() => expect(second).toBeDefined());
    await pool.end();
  });

  it("reads a Cursor's rows n at a time, stops its statement on close, and refuses one in a session", async () => {
    const pool = new Pool({ url: server.url, connectionString });
    const client = await pool.connect();
    const cursor = client.query(
      new Cursor('SELECT g AS client_cursor_victim FROM generate_series(1, 100000000) g'),
    );
    expect(await cursor.read(2)).toEqual([
      { client_cursor_victim: 1 },
      { client_cursor_victim: 2 },
    ]);
    expect(await cursor.read(1)).toEqual([{ client_cursor_victim: 3 }]);
    expect(await running('client_cursor_victim')).toBe(true);
    await cursor.close();
    await eventually(async () => expect(await running('client_cursor_victim')).toBe(false));
    const small = client.query(new Cursor('SELECT 1 AS one', [], { rowMode: 'array' }));
    expect([await small.read(5), await small.read(5)]).toEqual([[[1]], []]);
    await client.query('SELECT 1');
    const refused = client.query(new Cursor('SELECT 1'));
    await expect(refused.read(1)).rejects.toThrow(/session, which cannot stream/);
    client.release();
    await pool.end();
  });

  it('pins a client to one session until release: its statements share one connection', async () => {
    const pool = new Pool({ url: server.url, connectionString });
    const client = await pool.connect();
    await client.query('CREATE TEMP TABLE client_pinned (a int)');
    await client.query('INSERT INTO client_pinned VALUES (1)');
    expect((await client.query('SELECT a FROM client_pinned')).rows).toEqual([{ a: 1 }]);
    expect(service.sessionStatistics().open).toBe(1);
    client.release();
    await eventually(() => expect(service.sessionStatistics().open).toBe(0));
    await expect(client.query('SELECT 1')).rejects.toThrow(/released/);
    await pool.end();
  });
});

describe('the bundle', () => {
  it('imports nothing from Node, in either format', () => {
    for (const file of ['index.mjs', 'index.cjs']) {
      const code = readFileSync(path.join(__dirname, '..', 'dist', file), 'utf8');
      expect(code).not.toMatch(/\brequire\(["'](node:)?[a-z_]+["']\)/);
      expect(code).not.toMatch(/\bfrom ["']node:/);
      expect(code).not.toMatch(/\bimport\(["']node:/);
      expect(code).not.toMatch(/\b(Buffer|process)\./);
    }
  });
});
