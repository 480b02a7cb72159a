/**
 * Named prepared statements behind a real PgBouncer in transaction mode (docs/decisions.md 10.30).
 * PgBouncer gives each transaction whichever backend is free, so a statement one client connection
 * prepared on a backend is found there by every other client connection: of the same sqlgate pool,
 * of another caller's pool (PgBouncer logs every client in as one server user), or of another
 * sqlgate instance. A name that stood for different texts in different client connections ran
 * another caller's text and answered with its rows.
 */
import { startLocalPgBouncer, type LocalPgBouncer } from '@sqlgate/testing';
import request from 'supertest';
import { createTestApp, database, sql, type TestApp } from './support';

const OWNERS = ['alice', 'bob'] as const;
type Owner = (typeof OWNERS)[number];
/** Each caller's table holds rows naming it. */
const tableOf = (owner: Owner) => `pooler_rows_${owner}`;
/**
 * Each caller's text: a read without a literal, which sqlgate names. The sleep keeps both callers'
 * first round trips running at once, so that PgBouncer gives them two backends and each prepares
 * its text on its own one.
 */
const textOf = (owner: Owner) => `SELECT owner FROM ${tableOf(owner)}, pg_sleep(0.05)`;
const ROUNDS = 25;

beforeAll(async () => {
  for (const owner of OWNERS) {
    await sql(`DROP TABLE IF EXISTS ${tableOf(owner)}`);
    await sql(`CREATE TABLE ${tableOf(owner)} (owner text)`);
    await sql(`INSERT INTO ${tableOf(owner)} VALUES ($1), ($1)`, [owner]);
  }
});
afterAll(async () => {
  for (const owner of OWNERS) await sql(`DROP TABLE IF EXISTS ${tableOf(owner)}`);
});

/** Each test has a PgBouncer of its own: its backends hold nothing an earlier test prepared. */
let bouncer: LocalPgBouncer;
beforeEach(async () => {
  bouncer = await startLocalPgBouncer({ server: database, poolMode: 'transaction', poolSize: 2 });
});
afterEach(() => bouncer.stop());

/** A query body through PgBouncer as `user`, whatever its password: PgBouncer lets it in. */
function through(user: string, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    host: bouncer.host,
    port: bouncer.port,
    user,
    password: `${user}-password`,
    database: bouncer.database,
    sslMode: 'disable',
    ...fields,
  };
}

/**
 * ROUNDS rounds of both callers sending their own text at once, the first caller to the first
 * app, the second to the last; what each got back when it was not its own rows.
 */
async function wrongAnswers(apps: TestApp[], userOf: (owner: Owner) => string): Promise<string[]> {
  const wrong: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      OWNERS.map(async (owner, index) => {
        const app = apps[Math.min(index, apps.length - 1)] as TestApp;
        const answer = await request(app.app)
          .post('/api/query')
          .send(through(userOf(owner), { sql: textOf(owner) }));
        const got =
          answer.status === 200
            ? answer.body.rows.map((row: { owner: string }) => row.owner)
            : [`status ${answer.status}`];
        if (got.length === 0 || got.some((value: unknown) => value !== owner)) {
          wrong.push(`${owner} got ${got.join(',')} in round ${round}`);
        }
      }),
    );
  }
  return wrong;
}

/**
 * The texts of sqlgate's statements held by the backend a read lands on: naming was not given up
 * along the way, the backends hold the callers' texts under sqlgate's names.
 */
async function namedOnABackend(app: TestApp): Promise<string[]> {
  const answer = await request(app.app)
    .post('/api/query')
    .send(
      through('observer', {
        sql: "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'sqlgate\\_%'",
      }),
    )
    .expect(200);
  return answer.body.rows.map((row: { statement: string }) => row.statement);
}

function expectCallersTextsNamed(named: string[]): void {
  expect(named.filter((text) => OWNERS.some((owner) => text === textOf(owner)))).not.toEqual([]);
}

describe('named statements behind PgBouncer in transaction mode', () => {
  it("answer each caller with its own rows, never another's: callers with credentials of their own", async () => {
    const app = createTestApp();
    try {
      expect(await wrongAnswers([app], (owner) => owner)).toEqual([]);
      expectCallersTextsNamed(await namedOnABackend(app));
    } finally {
      await app.close();
    }
  });

  it("answer each caller with its own rows, never another's: callers sharing credentials", async () => {
    const app = createTestApp();
    try {
      expect(await wrongAnswers([app], () => 'shared')).toEqual([]);
      expectCallersTextsNamed(await namedOnABackend(app));
    } finally {
      await app.close();
    }
  });

  it("answer each caller with its own rows, never another's: two sqlgate instances", async () => {
    const apps = [createTestApp(), createTestApp()];
    try {
      expect(await wrongAnswers(apps, () => 'shared')).toEqual([]);
      expectCallersTextsNamed(await namedOnABackend(apps[0] as TestApp));
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});
