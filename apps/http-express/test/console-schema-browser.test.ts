/// <reference lib="dom" />
// The callbacks given to page.evaluate run in the browser, with its globals.
/**
 * The console's schema browser, completion from the catalog and plans, end to end: Debian's
 * Chromium against sqlgate's built server as a child process and the real PostgreSQL, one page for
 * the whole file. Like console-browser.test.ts, every test also checks that the page threw nothing,
 * that its Content-Security-Policy blocked nothing and that it called nothing but its own sqlgate.
 */
import type { Page } from 'playwright-core';
import { eventually } from '@sqlgate/testing';
import { startChromium, type RunningChromium } from '@sqlgate/testing/chromium';
import { fillConnectionForm, replaceEditorText, watchProblems } from './browser';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { database, sql } from './support';

const TEST_TIMEOUT_MS = 60_000;

let sqlgate: SqlgateProcess;
let browser: RunningChromium;
let page: Page;
let problems: string[];
const requested: string[] = [];

const SETUP = `DROP SCHEMA IF EXISTS shop CASCADE;
CREATE SCHEMA shop;
CREATE TABLE shop.my_table (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE shop.orders (
  id serial PRIMARY KEY,
  my_table_id int NOT NULL REFERENCES shop.my_table (id),
  amount numeric(10, 2) DEFAULT 0
);
CREATE TABLE shop."MixedCase" ("Value" int);
INSERT INTO shop.my_table VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO shop.orders (my_table_id, amount) VALUES (1, 10), (1, 20), (2, 5), (3, 7);
ANALYZE shop.my_table;
ANALYZE shop.orders;`;

beforeAll(async () => {
  await sql(SETUP);
  [sqlgate, browser] = await Promise.all([startSqlgateProcess({}), startChromium()]);
  page = await browser.context.newPage();
  problems = watchProblems(page);
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(`${sqlgate.url}/`);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await fillConnectionForm(page, database);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sqlgate?.stop();
  await sql('DROP SCHEMA IF EXISTS shop CASCADE');
  await sql('DROP SCHEMA IF EXISTS emptyschema CASCADE');
  await sql('DROP SCHEMA IF EXISTS spoof CASCADE');
});

afterEach(() => {
  expect(
    requested.filter((url) => !url.startsWith(`${sqlgate.url}/`) && !url.startsWith('blob:')),
  ).toEqual([]);
  expect(problems).toEqual([]);
});

/** Replaces the editor's text; the cursor ends after it. */
function type(text: string): Promise<void> {
  return replaceEditorText(page, text);
}

async function editorText(): Promise<string> {
  return page.evaluate(() =>
    [...document.querySelectorAll('.cm-content .cm-line')]
      .map((line) => line.textContent)
      .join('\n'),
  );
}

/** The labels of the completion list Ctrl+Space opens at the cursor. */
async function completions(): Promise<string[]> {
  await page.keyboard.press('Control+Space');
  await page.waitForSelector('.cm-tooltip-autocomplete .cm-completionLabel');
  return page.locator('.cm-tooltip-autocomplete .cm-completionLabel').allTextContents();
}

/**
 * Accepts the completion labelled `label` with the mouse (keys pressed just after the list opens
 * are ignored by CodeMirror, for a short while).
 */
async function accept(label: string): Promise<void> {
  await page
    .locator('.cm-tooltip-autocomplete .cm-completionLabel')
    .filter({ hasText: new RegExp(`^${label}$`) })
    .click();
}

/** The text of one column's line in the schema browser. */
async function columnLine(relation: string, column: string): Promise<string> {
  return page.$eval(`[data-relation="${relation}"] [data-column="${column}"]`, (line) =>
    [...line.children].map((part) => part.textContent).join(' '),
  );
}

it(
  'lists the schema’s tables with their columns, keys and estimates, filters, and follows DDL',
  async () => {
    await page.click('[data-testid=schema-toggle]');
    await page.waitForSelector('[data-relation="shop.my_table"]');
    expect(
      await page
        .locator('[data-schema=shop] .schema-relation > summary .schema-name')
        .allTextContents(),
    ).toEqual(['MixedCase', 'my_table', 'orders']);
    expect(await page.textContent('[data-relation="shop.my_table"] .schema-estimate')).toBe(
      '~3 rows',
    );

    // Opening a relation lists its columns.
    await page.click('[data-relation="shop.my_table"] .schema-estimate');
    await page.click('[data-relation="shop.orders"] .schema-estimate');
    expect(await columnLine('shop.my_table', 'id')).toMatch(/^id integer PK/);
    expect(await columnLine('shop.my_table', 'name')).toBe('name text NOT NULL');
    expect(await columnLine('shop.orders', 'my_table_id')).toBe(
      'my_table_id integer NOT NULL → shop.my_table(id)',
    );
    expect(await columnLine('shop.orders', 'amount')).toBe('amount numeric(10,2) = 0');
    expect(await page.textContent('[data-relation="shop.my_table"] .schema-index')).toContain(
      'my_table_pkey',
    );

    // A name clicked is written at the cursor, quoted and qualified as SQL needs it.
    await type('SELECT * FROM ');
    await page.click('[data-relation="shop.MixedCase"] > summary .schema-name');
    expect(await editorText()).toBe('SELECT * FROM shop."MixedCase"');

    await page.fill('.schema-search', 'amount');
    expect(await page.locator('[data-schema=shop] .schema-relation').count()).toBe(1);
    expect(await columnLine('shop.orders', 'amount')).toContain('amount');
    await page.fill('.schema-search', '');

    // A run with DDL reads the catalog again: the new column shows without Refresh.
    await page.fill('.schema-search', 'note');
    await page.waitForSelector('.schema-status:text-is("Nothing matches")');
    await type('ALTER TABLE shop.orders ADD COLUMN note text');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('[data-relation="shop.orders"] [data-column=note]');
    await page.fill('.schema-search', '');

    // ▶ runs the relation's first rows, added to the editor's text rather than replacing it.
    await page.click('[data-relation="shop.my_table"] .schema-run');
    await page.waitForFunction(() => !document.body.classList.contains('is-running'));
    expect(await editorText()).toBe(
      'ALTER TABLE shop.orders ADD COLUMN note text\nSELECT * FROM shop.my_table LIMIT 100;',
    );
    await page.waitForSelector('.grid-rows .grid-row');
    expect(await page.locator('.grid-rows .grid-row').count()).toBe(3);
  },
  TEST_TIMEOUT_MS,
);

it(
  'completes table names of another schema qualified, and the columns of an alias',
  async () => {
    await type('SELECT * FROM my_t');
    expect(await completions()).toContain('my_table');
    await accept('my_table');
    expect(await editorText()).toBe('SELECT * FROM shop.my_table');

    await type('SELECT * FROM mixed');
    expect(await completions()).toContain('MixedCase');
    await accept('MixedCase');
    expect(await editorText()).toBe('SELECT * FROM shop."MixedCase"');

    await type('SELECT m. FROM shop.my_table m');
    await page.keyboard.press('Home');
    for (let i = 0; i < 'SELECT m.'.length; i++) await page.keyboard.press('ArrowRight');
    expect(await completions()).toEqual(expect.arrayContaining(['id', 'name']));
    await page.keyboard.press('Escape');
  },
  TEST_TIMEOUT_MS,
);

it(
  'explains and analyses a join: a tree whose root counts the rows the query returns',
  async () => {
    const query =
      'SELECT o.id, m.name FROM shop.orders o JOIN shop.my_table m ON m.id = o.my_table_id WHERE o.amount > 6';
    const [{ count }] = (await sql(`SELECT count(*)::int AS count FROM (${query}) q`)) as [
      { count: number },
    ];
    expect(count).toBe(3);
    await type(query);
    await page.click('button:text-is("Explain analyze")');
    const root = page.locator('.plan-tree > .plan-node');
    await root.waitFor();
    expect(await root.getAttribute('data-actual-rows')).toBe(String(count));
    // The join's inputs are nodes nested in it, each naming the table it scans.
    const targets = await root.locator('.plan-children .plan-target').allTextContents();
    expect(targets).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^on orders o\b/),
        expect.stringMatching(/^on my_table m\b/),
      ]),
    );
    expect(await page.textContent('[data-testid=plan-summary]')).toMatch(/Execution \d/);
    expect(await page.locator('[data-testid=plan-rolled-back]').count()).toBe(0);
  },
  TEST_TIMEOUT_MS,
);

it(
  'analyses an INSERT inside a transaction that is rolled back: the row is not kept',
  async () => {
    // The statement under the cursor is the one explained: the cursor is on the second line.
    await type("SELECT 1;\nINSERT INTO shop.my_table VALUES (99, 'ghost');");
    // Without ANALYZE nothing runs: estimates only, and no transaction to roll back.
    await page.click('button:text-is("Explain")');
    await page.waitForSelector('.plan-tree > .plan-node[data-node-type=ModifyTable]');
    expect(await page.getAttribute('.plan-tree > .plan-node', 'data-actual-rows')).toBeNull();
    expect(await page.locator('[data-testid=plan-rolled-back]').count()).toBe(0);

    await page.click('button:text-is("Explain analyze")');
    await page.waitForSelector('[data-testid=plan-rolled-back]');
    expect(await page.textContent('[data-testid=plan-rolled-back]')).toContain(
      'ran inside a transaction that was rolled back',
    );
    expect(await page.getAttribute('.plan-tree > .plan-node', 'data-node-type')).toBe(
      'ModifyTable',
    );
    expect(await sql('SELECT id FROM shop.my_table WHERE id = 99')).toEqual([]);
  },
  TEST_TIMEOUT_MS,
);

/** The plan view's error once the plan's request ended. */
async function planError(): Promise<string | null> {
  await page.waitForSelector('.plan-error');
  return page.textContent('.plan-error');
}

/** The console's POST /api/query requests made while `act` runs. */
async function queriesDuring(act: () => Promise<void>): Promise<number> {
  const before = requested.filter((url) => url.endsWith('/api/query')).length;
  await act();
  return requested.filter((url) => url.endsWith('/api/query')).length - before;
}

it(
  'shows PostgreSQL’s errors in the plan, refuses what EXPLAIN cannot take, and says what it left out',
  async () => {
    await type('SELECT * FROM nosuchtable');
    await page.click('button:text-is("Explain")');
    expect(await planError()).toMatch(/^42P01: relation "nosuchtable" does not exist/);

    // Statements EXPLAIN does not take are refused in the page, without a request.
    for (const statement of ['COMMIT', 'VACUUM shop.orders']) {
      await type(statement);
      const sent = await queriesDuring(async () => {
        await page.click('button:text-is("Explain")');
        expect(await planError()).toMatch(/cannot be explained: EXPLAIN takes SELECT/);
      });
      expect(sent).toBe(0);
    }

    await type('SELECT 1; SELECT 2; SELECT 3;');
    await page.keyboard.press('Control+A');
    await page.click('button:text-is("Explain")');
    expect(await page.textContent('[data-testid=plan-note]')).toBe(
      'Explained the first of 3 statements selected',
    );

    // With the form's Read only, a write is not run in a rolled-back transaction: it is refused.
    await page.click('#tab-connection');
    await page.check('#field-readOnly');
    await page.click('#tab-query');
    await type("INSERT INTO shop.my_table VALUES (98, 'read only')");
    await page.click('button:text-is("Explain analyze")');
    expect(await planError()).toMatch(/^25006: cannot execute INSERT in a read-only transaction/);
    await page.click('#tab-connection');
    await page.uncheck('#field-readOnly');
    await page.click('#tab-query');
    expect(await sql('SELECT id FROM shop.my_table WHERE id = 98')).toEqual([]);
  },
  TEST_TIMEOUT_MS,
);

it(
  'cancels a running Explain analyze: the statement stops and the buttons come back',
  async () => {
    const marker = `plan_cancel_${Date.now()}`;
    const running = (): Promise<unknown[]> =>
      sql(
        "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
        [`%${marker}%`],
      );
    await type(`SELECT pg_sleep(30) AS ${marker}`);
    await page.click('button:text-is("Explain analyze")');
    await eventually(async () => expect(await running()).toHaveLength(1));
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await planError()).toBe(
      'Cancelled: the statement was stopped before its plan came back',
    );
    await page.waitForSelector('button:text-is("Explain analyze"):not([disabled])');
    expect(await page.getByRole('button', { name: 'Cancel', exact: true }).isDisabled()).toBe(true);
    await eventually(async () => expect(await running()).toEqual([]));

    // Close of a plan being made cancels it too.
    await page.click('button:text-is("Explain analyze")');
    await eventually(async () => expect(await running()).toHaveLength(1));
    await page.click('button[aria-label="Close the plan"]');
    await eventually(async () => expect(await running()).toEqual([]));
    await page.waitForSelector('button:text-is("Explain analyze"):not([disabled])');
  },
  TEST_TIMEOUT_MS,
);

it(
  'lists empty schemas, shows bidi controls in names as escapes, ignores the form’s Max rows, refreshes once at a time',
  async () => {
    await sql('CREATE SCHEMA IF NOT EXISTS emptyschema; CREATE SCHEMA IF NOT EXISTS spoof');
    // A right-to-left override would show this name as "reportexe.jpg".
    await sql('CREATE TABLE IF NOT EXISTS spoof."report\u202Egpj.exe" (id int)');
    await page.click('#tab-connection');
    await page.fill('#field-maxRows', '1');
    await page.click('#tab-query');
    const sent = await queriesDuring(async () => {
      // Clicks while the catalog is being read add no read of their own.
      await page.$eval('[data-testid=schema-refresh]', (refresh) => {
        for (let i = 0; i < 15; i++) (refresh as HTMLButtonElement).click();
      });
      await page.waitForSelector('[data-schema=emptyschema]');
    });
    expect(sent).toBe(1);
    expect(
      await page
        .locator('[data-schema=shop] .schema-relation > summary .schema-name')
        .allTextContents(),
    ).toEqual(['MixedCase', 'my_table', 'orders']);
    expect(await page.textContent('.schema-status')).not.toContain('partial');
    // The name shows its override as an escape; clicking it still inserts the name itself.
    const spoofed = page.locator('[data-schema=spoof] .schema-relation > summary .schema-name');
    expect(await spoofed.textContent()).toBe('report\\u202Egpj.exe');
    await type('SELECT * FROM ');
    await page.click('[data-schema=spoof] > summary .schema-kind');
    await spoofed.click();
    // The editor draws the override as a placeholder: its text, as kept, holds the name itself.
    expect(await page.evaluate(() => localStorage.getItem('sqlgate.console.sql'))).toBe(
      'SELECT * FROM spoof."report\u202Egpj.exe"',
    );

    // A catalog that cannot be read says why, as PostgreSQL said it.
    await page.click('#tab-connection');
    await page.fill('#field-maxRows', '');
    await page.fill('#field-password', 'not-the-password');
    await page.click('#tab-query');
    await page.click('[data-testid=schema-refresh]');
    await page.waitForSelector('.schema-status:has-text("28P01")');
    expect(await page.textContent('.schema-status')).toMatch(
      /^The catalog could not be read: 28P01: password authentication failed/,
    );
    await fillConnectionForm(page, database);
  },
  TEST_TIMEOUT_MS,
);
