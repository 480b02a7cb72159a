/// <reference lib="dom" />
// The callbacks given to page.evaluate run in the browser, with its globals.
/**
 * @sqlgate/client in a real browser (Chromium), from the console's origin: its ES module bundle,
 * loaded by a page of sqlgate's own origin (served here through the browser's request routing, so
 * that only these two files are made up), runs a query, a batch, an interactive transaction and a
 * stream against the built sqlgate server and the real PostgreSQL, and an abort that stops the
 * statement in PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { eventually } from '@sqlgate/testing';
import { startChromium, type RunningChromium } from '@sqlgate/testing/chromium';
import { watchProblems } from './browser';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { database, sql } from './support';

const BUNDLE = path.join(__dirname, '..', '..', '..', 'packages', 'client', 'dist', 'index.mjs');

let sqlgate: SqlgateProcess;
let browser: RunningChromium;
let page: Page;
let problems: string[];

const connectionString =
  `postgresql://${encodeURIComponent(database.user)}:${encodeURIComponent(database.password ?? '')}` +
  `@${database.host}:${database.port}/${encodeURIComponent(database.database)}`;

beforeAll(async () => {
  await sql('DROP TABLE IF EXISTS client_browser; CREATE TABLE client_browser (n int)');
  [sqlgate, browser] = await Promise.all([startSqlgateProcess({}), startChromium()]);
  problems = [];
  page = await openClientPage();
}, 60_000);

/** A page of sqlgate's origin that has loaded the bundle as `window.client`. */
async function openClientPage(): Promise<Page> {
  const opened = await browser.context.newPage();
  problems.push(...watchProblems(opened));
  await opened.route(`${sqlgate.url}/client-test.html`, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><script type="module">
        import * as client from '/client-test.mjs';
        window.client = client;
        document.body.dataset.ready = 'yes';
      </script>`,
    }),
  );
  await opened.route(`${sqlgate.url}/client-test.mjs`, (route) =>
    route.fulfill({ contentType: 'text/javascript', body: readFileSync(BUNDLE, 'utf8') }),
  );
  await opened.goto(`${sqlgate.url}/client-test.html`);
  await opened.waitForSelector('body[data-ready="yes"]', { state: 'attached' });
  return opened;
}

afterAll(async () => {
  await browser?.close();
  await sqlgate?.stop();
});

afterEach(() => expect(problems).toEqual([]));

interface Window {
  client: typeof import('@sqlgate/client');
}

it('queries, batches, runs an interactive transaction and streams rows', async () => {
  const seen = await page.evaluate(async (target) => {
    const { sqlgate } = (window as unknown as Window).client;
    const sql = sqlgate({ url: location.origin, connectionString: target });
    const select = await sql`SELECT ${41}::int + 1 AS answer, now() AS at`;
    await sql.transaction([
      sql`INSERT INTO client_browser VALUES (1)`,
      sql`INSERT INTO client_browser VALUES (2)`,
    ]);
    const committed = await sql.begin(async (tx) => {
      await tx`INSERT INTO client_browser VALUES (3)`;
      return tx`SELECT count(*)::int AS n FROM client_browser`;
    });
    const streamed: unknown[] = [];
    for await (const row of sql.stream('SELECT n FROM client_browser ORDER BY n', [], {
      arrayMode: true,
    }))
      streamed.push(row);
    return {
      answer: (select[0] as { answer: number }).answer,
      atIsDate: (select[0] as { at: unknown }).at instanceof Date,
      committed,
      streamed,
    };
  }, connectionString);
  expect(seen).toEqual({
    answer: 42,
    atIsDate: true,
    committed: [{ n: 3 }],
    streamed: [[1], [2], [3]],
  });
});

it('stops a statement in PostgreSQL when the page aborts its call', async () => {
  const aborted = page.evaluate(async (target) => {
    const { sqlgate } = (window as unknown as Window).client;
    const sql = sqlgate({ url: location.origin, connectionString: target });
    const controller = new AbortController();
    (window as unknown as { abortVictim: () => void }).abortVictim = () => controller.abort();
    try {
      await sql.query('SELECT pg_sleep(60) AS browser_abort_victim', [], {
        signal: controller.signal,
      });
      return 'resolved';
    } catch (error) {
      return (error as Error).name;
    }
  }, connectionString);
  const active = async (): Promise<number> =>
    Number(
      (
        await sql(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%AS browser_abort_victim%'",
        )
      )[0]?.n,
    );
  await eventually(async () => expect(await active()).toBe(1));
  await page.evaluate(() => (window as unknown as { abortVictim: () => void }).abortVictim());
  expect(await aborted).toBe('AbortError');
  await eventually(async () => expect(await active()).toBe(0));
});

it('ends a begin() still open when its page goes away, rolling the transaction back', async () => {
  const leaving = await openClientPage();
  await leaving.evaluate(async (target) => {
    const { sqlgate } = (window as unknown as Window).client;
    const sql = sqlgate({ url: location.origin, connectionString: target });
    await new Promise<void>((inserted) => {
      void sql.begin(async (tx) => {
        await tx`INSERT INTO client_browser VALUES (100)`;
        inserted();
        // The page goes away before the work ends.
        await new Promise(() => {});
      });
    });
  }, connectionString);
  await leaving.goto('about:blank');
  await leaving.close();
  await eventually(async () => expect(await sessionsOpen()).toBe(0));
  expect(await sql('SELECT n FROM client_browser WHERE n = 100')).toEqual([]);
});

/** Sessions open now in sqlgate (its GET /metrics). */
async function sessionsOpen(): Promise<number> {
  const text = await (await fetch(`${sqlgate.url}/metrics`)).text();
  const line = text.split('\n').find((each) => each.startsWith('sqlgate_sessions_open '));
  return Number(line?.split(' ')[1]);
}

describe('from a page of another origin listed in CORS_ORIGINS (a real preflight)', () => {
  let app: Server;
  let listed: SqlgateProcess;
  let appPage: Page;

  beforeAll(async () => {
    // The page's own server, on another loopback port: another origin of the same address space.
    app = createServer((req, res) => {
      if (req.url === '/client.mjs') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(BUNDLE));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><script type="module">
        import * as client from '/client.mjs';
        window.client = client;
        document.body.dataset.ready = 'yes';
      </script>`);
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    listed = await startSqlgateProcess({ CORS_ORIGINS: origin });
    appPage = await browser.context.newPage();
    problems.push(...watchProblems(appPage));
    await appPage.goto(`${origin}/app.html`);
    await appPage.waitForSelector('body[data-ready="yes"]', { state: 'attached' });
  }, 60_000);

  afterAll(async () => {
    await listed?.stop();
    // The browser keeps its connections open: closed here, or close() would wait for them.
    app?.closeAllConnections();
    await new Promise((resolve) => app?.close(resolve));
  });

  it('queries, batches and runs an interactive transaction through CORS', async () => {
    const seen = await appPage.evaluate(
      async ({ url, target }) => {
        const { sqlgate } = (window as unknown as Window).client;
        const sql = sqlgate({ url, connectionString: target });
        const [row] = await sql`SELECT ${1}::int AS one`;
        const batch = await sql.transaction([sql`SELECT 2 AS two`], { readOnly: true });
        const inTransaction = await sql.begin((tx) => tx`SELECT 3 AS three`);
        return { row, batch, inTransaction };
      },
      { url: listed.url, target: connectionString },
    );
    expect(seen).toEqual({ row: { one: 1 }, batch: [[{ two: 2 }]], inTransaction: [{ three: 3 }] });
  });
});
