// One workload through one client of POST /sql, in its own process (the clients are ES modules, and
// drizzle changes the Neon driver's global type parsers): `node workload.mjs <client> <driver>`
// with SQLGATE_URL (sqlgate's base URL) and DATABASE_URL (the target, as a libpq URI). The client is
// the stock query function, drizzle-orm/neon-http or kysely-neon; the driver under it is the Neon
// driver's `neon()` or @sqlgate/client's `sqlgate()`. It prints one JSON object: each check's name
// and what it saw, for neon-compat.test.ts to judge. The tables (neon_every_type, neon_item) are
// made by the test before it runs.
import { Buffer } from 'node:buffer';
import { neon as neonDriver, neonConfig, NeonDbError } from '@neondatabase/serverless';
import { Cursor, DATE_TIME_AS_TEXT, Pool, sqlgate, SqlgateError } from '@sqlgate/client';
import pg from 'pg';

const [client, driver = 'neon'] = process.argv.slice(2);
const { SQLGATE_URL, DATABASE_URL } = process.env;
neonConfig.fetchEndpoint = `${SQLGATE_URL}/sql`;
/** The query function under test, on DATABASE_URL. */
const neon =
  driver === 'sqlgate'
    ? () => sqlgate({ url: SQLGATE_URL, connectionString: DATABASE_URL })
    : (url) => neonDriver(url);
/** Under drizzle's neon-http driver, which wants dates and times as text (client README). */
const neonForDrizzle =
  driver === 'sqlgate'
    ? () => sqlgate({ url: SQLGATE_URL, connectionString: DATABASE_URL, types: DATE_TIME_AS_TEXT })
    : (url) => neonDriver(url);
const DriverError = driver === 'sqlgate' ? SqlgateError : NeonDbError;

/** Every common type, as written through the client and read back by pg. */
const EVERY_TYPE_COLUMNS =
  'i2, i4, i8, num, f4, f8, b, t, u, d, ts, tstz, iv, j, jb, by, ia, ta, m, n';
const EVERY_TYPE_VALUES = [
  '-32768',
  2147483647,
  '9007199254740993',
  '12345678901234.123456',
  1.5,
  -0.000123456789,
  true,
  'tab\there "quoted" \\ back',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '2024-02-29',
  '2024-02-29 23:59:59.123456',
  '2024-02-29 23:59:59.123456+05:30',
  '1 year 2 mons 3 days 04:05:06.789',
  '{"a": [1, 2, {"b": null}]}',
  { k: 'v', n: [1, 2.5] },
  Buffer.from([0, 1, 254, 255]),
  [1, null, 3],
  ['x', 'y,z', 'q"uote', null],
  'happy',
  null,
];
const PLACEHOLDERS = EVERY_TYPE_VALUES.map((_, i) => `$${i + 1}`).join(', ');

const checks = {};
async function check(name, run) {
  try {
    checks[name] = { ok: true, value: await run() };
  } catch (error) {
    checks[name] = { ok: false, error: describe(error) };
  }
}

function describe(error) {
  const cause = error?.cause ?? error;
  return {
    name: error?.constructor?.name,
    message: String(error?.message ?? error),
    code: cause?.code ?? error?.code,
    causeName: cause?.constructor?.name,
  };
}

/** What plain pg reads of `text`: the reference every client's rows are compared with. */
async function viaPg(text, params = []) {
  const direct = new pg.Client({ connectionString: DATABASE_URL });
  await direct.connect();
  try {
    return (await direct.query(text, params)).rows;
  } finally {
    await direct.end();
  }
}

/**
 * Values JSON can compare: bytes as hex (pg's Buffer and @sqlgate/client's Uint8Array alike), Dates
 * as ISO text, bigints as text.
 */
function comparable(value) {
  const hex = (bytes) => Buffer.from(bytes).toString('hex');
  return JSON.parse(
    JSON.stringify(value, (_key, v) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array && !Buffer.isBuffer(v) ? hex(v) : v,
    ),
    (_key, v) => (v && v.type === 'Buffer' && Array.isArray(v.data) ? hex(v.data) : v),
  );
}

async function neonWorkload() {
  const sql = neon(DATABASE_URL);
  await check('select', async () => {
    const rows = await sql`SELECT ${41}::int + 1 AS answer, ${'text'} AS t`;
    return rows;
  });
  await check('types-write', async () => {
    const [row] = await sql.query(
      `INSERT INTO neon_every_type (${EVERY_TYPE_COLUMNS}) VALUES (${PLACEHOLDERS}) RETURNING id`,
      EVERY_TYPE_VALUES,
    );
    return row.id;
  });
  await check('types-read-equal-to-pg', async () => {
    const text = `SELECT * FROM neon_every_type ORDER BY id`;
    const mine = comparable(await sql.query(text));
    const reference = comparable(await viaPg(text));
    return { equal: JSON.stringify(mine) === JSON.stringify(reference), mine, reference };
  });
  await check('full-results', async () => {
    const result = await sql.query('UPDATE neon_item SET qty = qty WHERE false', [], {
      fullResults: true,
    });
    return { command: result.command, rowCount: result.rowCount, fields: result.fields.length };
  });
  await check('array-mode', () => sql.query('SELECT 1 AS a, 2 AS a', [], { arrayMode: true }));
  await check('fragments', async () => {
    const where = sql`WHERE name = ${'fragment'}`;
    await sql`INSERT INTO neon_item (name, qty) VALUES (${'fragment'}, ${3})`;
    return sql`SELECT name, qty FROM neon_item ${where}`;
  });
  await check('error-sqlstate', async () => {
    try {
      await sql`SELECT 1 / ${0}::int`;
      return 'no error';
    } catch (error) {
      return {
        isDriverError: error instanceof DriverError,
        code: error.code,
        message: error.message,
      };
    }
  });
  await check('transaction-commits', async () => {
    const results = await sql.transaction([
      sql`INSERT INTO neon_item (name, qty) VALUES ('tx-a', 1)`,
      sql`INSERT INTO neon_item (name, qty) VALUES ('tx-b', 2) RETURNING qty`,
    ]);
    const visible = await sql`SELECT count(*)::int AS n FROM neon_item WHERE name LIKE 'tx-_'`;
    return { returned: results[1], visible: visible[0].n };
  });
  await check('transaction-rolls-back', async () => {
    let code;
    try {
      await sql.transaction([
        sql`INSERT INTO neon_item (name, qty) VALUES ('rolled-back', 1)`,
        sql`INSERT INTO neon_item (name, qty) VALUES (NULL, 1)`,
      ]);
    } catch (error) {
      code = error.code;
    }
    const left = await sql`SELECT count(*)::int AS n FROM neon_item WHERE name = 'rolled-back'`;
    return { code, left: left[0].n };
  });
  await check('transaction-options', async () => {
    try {
      await sql.transaction((tx) => [tx`INSERT INTO neon_item (name, qty) VALUES ('ro', 1)`], {
        readOnly: true,
        isolationLevel: 'Serializable',
      });
      return 'no error';
    } catch (error) {
      return { code: error.code };
    }
  });
}

async function drizzleWorkload() {
  const { drizzle } = await import('drizzle-orm/neon-http');
  const { pgTable, serial, text, integer } = await import('drizzle-orm/pg-core');
  const { eq, sql: raw } = await import('drizzle-orm');
  const item = pgTable('neon_item', {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    qty: integer('qty').notNull(),
  });
  const db = drizzle({ client: neonForDrizzle(DATABASE_URL) });
  await check('crud', async () => {
    const [created] = await db.insert(item).values({ name: 'drizzle', qty: 1 }).returning();
    await db.update(item).set({ qty: 5 }).where(eq(item.id, created.id));
    const [read] = await db.select().from(item).where(eq(item.id, created.id));
    await db.delete(item).where(eq(item.id, created.id));
    const after = await db.select().from(item).where(eq(item.id, created.id));
    return { read: { name: read.name, qty: read.qty }, after: after.length };
  });
  await check('types-read-equal-to-pg', async () => {
    // drizzle keeps timestamps, dates and intervals as PostgreSQL's text (its own parsers).
    const result = await db.execute(
      raw`SELECT i8, num, ts, tstz, d, iv FROM neon_every_type ORDER BY id`,
    );
    const reference = await viaPg(
      'SELECT i8, num, ts::text AS ts, tstz::text AS tstz, d::text AS d, iv::text AS iv FROM neon_every_type ORDER BY id',
    );
    return {
      equal: JSON.stringify(comparable(result.rows)) === JSON.stringify(comparable(reference)),
      rows: result.rows,
    };
  });
  await check('error-sqlstate', async () => {
    try {
      await db.insert(item).values({ name: null, qty: 1 });
      return 'no error';
    } catch (error) {
      return describe(error);
    }
  });
  await check('batch-commits', async () => {
    await db.batch([
      db.insert(item).values({ name: 'batch-a', qty: 1 }),
      db.insert(item).values({ name: 'batch-b', qty: 2 }),
    ]);
    const rows = await db
      .select()
      .from(item)
      .where(raw`name LIKE 'batch-_'`);
    return rows.length;
  });
  await check('batch-rolls-back', async () => {
    let failed;
    try {
      await db.batch([
        db.insert(item).values({ name: 'batch-rolled-back', qty: 1 }),
        db.execute(raw`SELECT 1 / 0`),
      ]);
    } catch (error) {
      failed = describe(error);
    }
    const rows = await db.select().from(item).where(eq(item.name, 'batch-rolled-back'));
    return { failed, left: rows.length };
  });
}

async function kyselyWorkload() {
  const { Kysely } = await import('kysely');
  const { NeonDialect } = await import('kysely-neon');
  const db = new Kysely({ dialect: new NeonDialect({ neon: neon(DATABASE_URL) }) });
  await check('crud', async () => {
    const created = await db
      .insertInto('neon_item')
      .values({ name: 'kysely', qty: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const updated = await db
      .updateTable('neon_item')
      .set({ qty: 7 })
      .where('id', '=', created.id)
      .executeTakeFirst();
    const read = await db
      .selectFrom('neon_item')
      .select(['name', 'qty'])
      .where('id', '=', created.id)
      .executeTakeFirst();
    const deleted = await db
      .deleteFrom('neon_item')
      .where('id', '=', created.id)
      .executeTakeFirst();
    return {
      updated: String(updated.numUpdatedRows),
      read,
      deleted: String(deleted.numDeletedRows),
    };
  });
  await check('error-sqlstate', async () => {
    try {
      await db.insertInto('neon_item').values({ name: null, qty: 1 }).execute();
      return 'no error';
    } catch (error) {
      return describe(error);
    }
  });
  await db.destroy();
}

/** How many committed rows named `name` another connection sees. */
async function seenElsewhere(name) {
  const [row] = await viaPg('SELECT count(*)::int AS n FROM neon_item WHERE name = $1', [name]);
  return row.n;
}

/** drizzle-orm's node-postgres driver, on @sqlgate/client's pg-compatible Pool. */
async function drizzlePoolWorkload() {
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const { pgTable, serial, text, integer } = await import('drizzle-orm/pg-core');
  const { eq } = await import('drizzle-orm');
  const item = pgTable('neon_item', {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    qty: integer('qty').notNull(),
  });
  const pool = new Pool({ url: SQLGATE_URL, connectionString: DATABASE_URL });
  const db = drizzle({ client: pool });
  await check('crud', async () => {
    const [created] = await db.insert(item).values({ name: 'drizzle-pool', qty: 1 }).returning();
    await db.update(item).set({ qty: 4 }).where(eq(item.id, created.id));
    const [read] = await db.select().from(item).where(eq(item.id, created.id));
    return { name: read.name, qty: read.qty };
  });
  await check('transaction-commits-isolated', async () => {
    const inside = await db.transaction(async (tx) => {
      await tx.insert(item).values({ name: 'drizzle-tx', qty: 1 });
      const mine = await tx.select().from(item).where(eq(item.name, 'drizzle-tx'));
      return { mine: mine.length, elsewhere: await seenElsewhere('drizzle-tx') };
    });
    return { ...inside, afterCommit: await seenElsewhere('drizzle-tx') };
  });
  await check('transaction-rolls-back', async () => {
    let message;
    try {
      await db.transaction(async (tx) => {
        await tx.insert(item).values({ name: 'drizzle-rollback', qty: 1 });
        throw new Error('changed my mind');
      });
    } catch (error) {
      message = error.message;
    }
    return { message, left: await seenElsewhere('drizzle-rollback') };
  });
  await check('error-sqlstate', async () => {
    try {
      await db.insert(item).values({ name: null, qty: 1 });
      return 'no error';
    } catch (error) {
      return describe(error);
    }
  });
  await pool.end();
}

/** Kysely's own PostgresDialect, on @sqlgate/client's pg-compatible Pool. */
async function kyselyPoolWorkload() {
  const { Kysely, PostgresDialect } = await import('kysely');
  const pool = new Pool({ url: SQLGATE_URL, connectionString: DATABASE_URL });
  const db = new Kysely({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
  await check('crud', async () => {
    const created = await db
      .insertInto('neon_item')
      .values({ name: 'kysely-pool', qty: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const updated = await db
      .updateTable('neon_item')
      .set({ qty: 9 })
      .where('id', '=', created.id)
      .executeTakeFirst();
    return { updated: String(updated.numUpdatedRows) };
  });
  await check('transaction-commits-isolated', async () => {
    const inside = await db.transaction().execute(async (trx) => {
      await trx.insertInto('neon_item').values({ name: 'kysely-tx', qty: 1 }).execute();
      const mine = await trx
        .selectFrom('neon_item')
        .selectAll()
        .where('name', '=', 'kysely-tx')
        .execute();
      return { mine: mine.length, elsewhere: await seenElsewhere('kysely-tx') };
    });
    return { ...inside, afterCommit: await seenElsewhere('kysely-tx') };
  });
  await check('transaction-rolls-back', async () => {
    let code;
    try {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('neon_item').values({ name: 'kysely-rollback', qty: 1 }).execute();
        await trx.insertInto('neon_item').values({ name: null, qty: 1 }).execute();
      });
    } catch (error) {
      code = error.code;
    }
    return { code, left: await seenElsewhere('kysely-rollback') };
  });
  await check('stream', async () => {
    const names = [];
    for await (const row of db.selectFrom('neon_item').select('name').orderBy('id').stream(2)) {
      names.push(row.name);
    }
    const [{ n }] = await viaPg('SELECT count(*)::int AS n FROM neon_item');
    return { streamed: names.length, rows: n };
  });
  await db.destroy();
}

const workloads = {
  neon: neonWorkload,
  drizzle: drizzleWorkload,
  kysely: kyselyWorkload,
  'drizzle-pool': drizzlePoolWorkload,
  'kysely-pool': kyselyPoolWorkload,
};
await workloads[client]();
process.stdout.write(`${JSON.stringify(checks)}\n`);
