/**
 * A statement that commits on its own, whose connection is lost after it reached PostgreSQL, may
 * have committed: its answer says that the outcome is unknown, never that it failed
 * (docs/decisions.md 10.5). A caller who believed the failure would run the write again. A proxy
 * between sqlgate and PostgreSQL cuts both sides of a connection shortly after it forwards a round
 * trip that holds the probe; PostgreSQL, which already has the round trip's Sync, runs the
 * statement to its end and commits it.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { backend, encode, eventually } from '@sqlgate/testing';
import request from 'supertest';
import { createTestApp, database, sql, target, type TestApp } from './support';

// Each test waits for its cut statement to end in PostgreSQL.
jest.setTimeout(60_000);

const PROBE = 'cut-probe';
/** Like the probe, but the proxy answers as PgBouncer does when its server connection broke. */
const FATAL_PROBE = 'fatal-probe';
const CUT_AFTER_MS = 200;
/** How long each cut statement runs: far past CUT_AFTER_MS, so that the cut comes first however late timers fire. */
const SLEEP_SECONDS = 2;
const UNKNOWN = /whether it committed is unknown/;

/**
 * Forwards to the test database; cuts a connection CUT_AFTER_MS after it forwards the probe, or
 * sends PgBouncer's FATAL 08P01 then for the FATAL probe.
 */
async function cuttingProxy(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(database.port, database.host);
    sockets.add(client).add(upstream);
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (chunk.includes(PROBE)) setTimeout(cut, CUT_AFTER_MS);
      if (chunk.includes(FATAL_PROBE)) {
        setTimeout(() => {
          upstream.destroy();
          client.end(poolerFatal());
        }, CUT_AFTER_MS);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** An ErrorResponse as PgBouncer sends it when its server connection broke. */
function poolerFatal(): Buffer {
  return encode([
    backend.errorResponse({ S: 'FATAL', V: 'FATAL', C: '08P01', M: 'server conn crashed?' }),
  ]);
}

let testApp: TestApp;
let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
const throughProxy = () => target({ host: '127.0.0.1', port: proxy.port, sslMode: 'disable' });
const query = (sqlText: string) =>
  request(testApp.app)
    .post('/api/query')
    .send({ ...throughProxy(), sql: sqlText });
const rowsWith = async (id: number): Promise<number> =>
  (
    (await sql('SELECT count(*)::int AS n FROM lost_writes WHERE id = $1', [id])) as { n: number }[]
  )[0]?.n ?? -1;
/** The row the cut statement writes, once it has finished in PostgreSQL. */
const committedRow = (id: number) =>
  eventually(async () => expect(await rowsWith(id)).toBe(1), { withinMs: 30_000 });
/** No backend runs a cut statement any more: what it wrote is committed or rolled back. */
const cutStatementsEnded = () =>
  eventually(
    async () =>
      expect(
        await sql(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()',
          [`%${PROBE}%`],
        ),
      ).toEqual([{ n: 0 }]),
    { withinMs: 30_000 },
  );

beforeAll(async () => {
  await sql(`
    DROP TABLE IF EXISTS lost_writes;
    CREATE TABLE lost_writes (id int, note text);
    CREATE OR REPLACE FUNCTION lost_writes_add(id int, note text) RETURNS int LANGUAGE sql AS
      'INSERT INTO lost_writes VALUES (id, note) RETURNING id';
  `);
  testApp = createTestApp();
  proxy = await cuttingProxy();
});
afterAll(async () => {
  await proxy.close();
  await testApp.close();
});

it('says that a lone write cut after it was sent may have committed', async () => {
  const response = await query(
    `INSERT INTO lost_writes SELECT 1, '${PROBE}' FROM pg_sleep(${SLEEP_SECONDS})`,
  );
  expect(response.status).toBe(502);
  expect(response.body.error.message).toMatch(UNKNOWN);
  // Programs need not read the message.
  expect(response.body.error.outcomeUnknown).toBe(true);
  // It did: the answer must not have said that it failed.
  await committedRow(1);
});

it('says so when a pooler’s FATAL ends the connection, never that the caller erred', async () => {
  const response = await query(
    `INSERT INTO lost_writes SELECT 8, '${FATAL_PROBE}' FROM pg_sleep(${SLEEP_SECONDS})`,
  );
  expect(response.status).toBe(502);
  expect(response.body.error).toMatchObject({ code: '08P01', outcomeUnknown: true });
  await committedRow(8);
});

it('says so for a write of a script without a transaction, after the statements that ran', async () => {
  const response = await query(
    `INSERT INTO lost_writes VALUES (2, 'first'); ` +
      `INSERT INTO lost_writes SELECT 3, '${PROBE}' FROM pg_sleep(${SLEEP_SECONDS}); VACUUM lost_writes`,
  );
  expect(response.status).toBe(502);
  const [first, cut] = response.body.results as {
    error?: string;
    rowCount?: number;
    cause?: { outcomeUnknown?: boolean };
  }[];
  expect(first).toMatchObject({ rowCount: 1 });
  expect(cut?.error).toMatch(UNKNOWN);
  expect(cut?.cause?.outcomeUnknown).toBe(true);
  await committedRow(3);
});

it('says so for a read that calls a function of its own, which may write', async () => {
  const response = await query(`SELECT lost_writes_add(7, '${PROBE}'), pg_sleep(${SLEEP_SECONDS})`);
  expect(response.status).toBe(502);
  expect(response.body.error.message).toMatch(UNKNOWN);
  await committedRow(7);
});

it('says that a read cut so failed: it changed nothing', async () => {
  // Slow without a volatile function: a read that calls one may write (the test above).
  const response = await query(
    `SELECT '${PROBE}' AS probe, count(*) FROM generate_series(1, 3000) a, generate_series(1, 5000) b`,
  );
  expect(response.status).toBe(502);
  expect(response.body.error.message).not.toMatch(UNKNOWN);
  expect(response.body.error.outcomeUnknown).toBeUndefined();
});

it('says that sqlgate’s own transaction cut before its COMMIT failed: nothing committed', async () => {
  const response = await query(
    `INSERT INTO lost_writes VALUES (4, 'in a transaction'); ` +
      `INSERT INTO lost_writes SELECT 5, '${PROBE}' FROM pg_sleep(${SLEEP_SECONDS})`,
  );
  expect(response.status).toBe(502);
  expect(JSON.stringify(response.body)).not.toMatch(UNKNOWN);
  await cutStatementsEnded();
  expect(await rowsWith(4)).toBe(0);
  expect(await rowsWith(5)).toBe(0);
});

it('says so in a session, for a write outside a transaction', async () => {
  const opened = await request(testApp.app).post('/api/sessions').send(throughProxy());
  expect(opened.status).toBe(201);
  const response = await request(testApp.app)
    .post(`/api/sessions/${opened.body.sessionId as string}/query`)
    .send({ sql: `INSERT INTO lost_writes SELECT 6, '${PROBE}' FROM pg_sleep(${SLEEP_SECONDS})` });
  expect(response.status).toBe(502);
  expect(response.body.error.message).toMatch(UNKNOWN);
  await committedRow(6);
});
