/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The callbacks given to page.evaluate run in the browser, with its globals.
/**
 * The browser console end to end (docs/decisions.md 10.31): Debian's Chromium against sqlgate's
 * built server as a child process and a real PostgreSQL. Every test also checks that the page
 * threw nothing and that its Content-Security-Policy blocked nothing.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { eventually } from '@sqlgate/testing';
import { startChromium, type RunningChromium } from '@sqlgate/testing/chromium';
import { fillConnectionForm, replaceEditorText, watchProblems } from './browser';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { startServer } from '../src/server';
import { database, psql, sql, target } from './support';
import type { ConnectionTarget } from '@sqlgate/core';

const TEST_TIMEOUT_MS = 60_000;

let sqlgate: SqlgateProcess;
let browser: RunningChromium;
let page: Page;
let problems: string[];
let requested: string[];

beforeAll(async () => {
  [sqlgate, browser] = await Promise.all([startSqlgateProcess({}), startChromium()]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sqlgate?.stop();
});

beforeEach(async () => {
  page = await browser.context.newPage();
  problems = watchProblems(page);
  requested = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(`${sqlgate.url}/`);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await useTestDatabase();
});

afterEach(async () => {
  await page.close();
  // The console works offline: nothing it loads or calls is outside the sqlgate that served it.
  expect(
    requested.filter((url) => !url.startsWith(`${sqlgate.url}/`) && !url.startsWith('blob:')),
  ).toEqual([]);
  expect(problems).toEqual([]);
});

/** Fills the connection form with the test database's settings. */
function useTestDatabase(): Promise<void> {
  return fillConnectionForm(page, database);
}

/** Sets one field of the connection form, then comes back to the query view. */
async function setField(field: string, value: string): Promise<void> {
  await page.click('#tab-connection');
  await page.fill(`#field-${field}`, value);
  await page.click('#tab-query');
}

/** Replaces the editor's text. */
function type(text: string): Promise<void> {
  return replaceEditorText(page, text);
}

/** Runs the editor's text (or selection) with Ctrl+Enter and waits for the run to end. */
async function run(text?: string): Promise<string> {
  if (text !== undefined) await type(text);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => !document.body.classList.contains('is-running'));
  return (await page.textContent('[data-testid=run-summary]')) ?? '';
}

async function tabTitles(): Promise<string[]> {
  return page.locator('.results [role=tab]').allTextContents();
}

/** The cells of the grid rows in the DOM: text, or null for a NULL. */
async function gridRows(): Promise<(string | null)[][]> {
  return page.$$eval('.grid-rows .grid-row', (rows) =>
    rows.map((row) =>
      [...row.querySelectorAll('[role=gridcell]')].map((cell) =>
        cell.hasAttribute('data-null') ? null : (cell.textContent ?? ''),
      ),
    ),
  );
}

/** The 0-based line of the editor holding the error marker, and the marked text. */
async function markedLine(): Promise<{ line: number; text: string } | undefined> {
  return page.evaluate(() => {
    const mark = document.querySelector('.cm-lintRange-error');
    const line = mark?.closest('.cm-line');
    if (!mark || !line) return undefined;
    return {
      line: [...document.querySelectorAll('.cm-line')].indexOf(line),
      text: mark.textContent ?? '',
    };
  });
}

const PSQL_NULL = '\\N';

/** psql's CSV of a query, NULL printed as \N: the oracle for values as PostgreSQL prints them. */
function psqlCsv(query: string): string {
  const result = psql(['--csv', '-P', `null=${PSQL_NULL}`], query);
  if (result.status !== 0) throw new Error(`psql failed: ${result.stderr}`);
  return result.stdout;
}

/**
 * The records of an RFC 4180 text: a field that was quoted is its text, an unquoted field equal to
 * `nullText` is null (sqlgate writes NULL as an unquoted empty field, psql as its null string).
 */
function parseCsv(text: string, nullText: string): (string | null)[][] {
  const records: (string | null)[][] = [];
  let record: (string | null)[] = [];
  let p = 0;
  while (p < text.length) {
    let field: string | null;
    if (text[p] === '"') {
      let value = '';
      p++;
      for (;;) {
        const quote = text.indexOf('"', p);
        value += text.slice(p, quote);
        p = quote + 1;
        if (text[p] !== '"') break;
        value += '"';
        p++;
      }
      field = value;
    } else {
      const end = text.slice(p).search(/,|\r?\n/);
      const value = end === -1 ? text.slice(p) : text.slice(p, p + end);
      p += value.length;
      field = value === nullText ? null : value;
    }
    record.push(field);
    if (text[p] === ',') p++;
    else {
      p += text[p] === '\r' ? 2 : 1;
      records.push(record);
      record = [];
    }
  }
  return records;
}

it(
  'runs a script of several statements and shows each in its own tab',
  async () => {
    const summary = await run(
      [
        'CREATE TEMP TABLE console_t (id int, name text);',
        "INSERT INTO console_t VALUES (1, 'a'), (2, NULL), (3, '');",
        "SELECT id, name, 'NULL' AS literal FROM console_t ORDER BY id;",
      ].join('\n'),
    );
    expect(summary).toContain('Succeeded');
    expect(summary).toContain('Transaction committed');
    expect(await tabTitles()).toEqual(['1. CREATE', '2. INSERT', '3. SELECT']);
    await page.click('.results [role=tab] >> text=3. SELECT');
    await page.waitForSelector('.grid-rows .grid-row');
    // NULL is marked apart from the empty string and from the string 'NULL'.
    expect(await gridRows()).toEqual([
      ['1', 'a', 'NULL'],
      ['2', null, 'NULL'],
      ['3', '', 'NULL'],
    ]);
    const header = await page.locator('.grid-header [role=columnheader]').allTextContents();
    expect(header).toEqual(['#', 'idint4', 'nametext', 'literaltext']);
    expect(await page.textContent('[data-testid=statement-meta]')).toContain('rowCount 3');
    await page.click('.results [role=tab] >> text=2. INSERT');
    expect(await page.textContent('[data-testid=statement-meta]')).toContain('INSERT · rowCount 3');
  },
  TEST_TIMEOUT_MS,
);

it(
  'says when a script’s transaction was rolled back, and which statement failed',
  async () => {
    const summary = await run(
      'CREATE TEMP TABLE console_r (id int);\nINSERT INTO console_r VALUES (1);\nSELECT 1/0;',
    );
    expect(summary).toContain('Failed');
    expect(summary).toContain('22012');
    expect(summary).toContain('Transaction rolled back: nothing was kept');
    expect(await page.getAttribute('.results [role=tab][aria-selected=true]', 'class')).toContain(
      'failed',
    );
  },
  TEST_TIMEOUT_MS,
);

it(
  'puts an error’s marker at its line and column and scrolls there, for the whole text and for a selection',
  async () => {
    const filler = Array.from({ length: 80 }, (_, i) => `SELECT ${i};`).join('\n');
    await run(`${filler}\nSELECT nope\n  FROM generate_series(1, 2) AS g;`);
    expect(await markedLine()).toEqual({ line: expect.any(Number), text: 'nope' });
    // The marked line is the 81st of the text, and it is in view (the editor scrolled to it).
    const lineNumber = await page.evaluate(() => {
      const line = document.querySelector('.cm-lintRange-error')?.closest('.cm-line');
      const editor = document.querySelector('.cm-scroller')?.getBoundingClientRect();
      const box = line?.getBoundingClientRect();
      const inView = !!box && !!editor && box.top >= editor.top && box.bottom <= editor.bottom;
      const gutter = [...document.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].find(
        (element) => Math.abs(element.getBoundingClientRect().top - (box?.top ?? -1)) < 2,
      );
      return { inView, number: gutter?.textContent };
    });
    expect(lineNumber).toEqual({ inView: true, number: '81' });

    // Only the selection runs; its error is placed in the whole text.
    await type('SELECT 1;\n-- only what follows is selected\nSELECT 2, 🐘 nope_two;');
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Control+Shift+End');
    const summary = await run();
    expect(summary).toContain('42703');
    expect(await tabTitles()).toHaveLength(1);
    expect(await markedLine()).toEqual({ line: 2, text: '🐘' });
    // The summary names the place in the whole text, as the editor shows it.
    expect(summary).toContain('42703: column "🐘" does not exist · line 3, column 11');
  },
  TEST_TIMEOUT_MS,
);

it(
  'stops a running pg_sleep(30) in PostgreSQL when Cancel is pressed',
  async () => {
    const marker = `console_cancel_${Date.now()}`;
    await type(`SELECT pg_sleep(30) AS ${marker};`);
    await page.keyboard.press('Control+Enter');
    const activeSleeps = async () =>
      (
        await sql(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
          [`%${marker}%`],
        )
      )[0]?.n;
    await eventually(async () => (await activeSleeps()) === 1);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    // Gone long before its 30 s: cancelled.
    await eventually(async () => (await activeSleeps()) === 0, { withinMs: 20_000 });
    await page.waitForFunction(() => !document.body.classList.contains('is-running'));
    expect(await page.textContent('[data-testid=run-summary]')).toContain('Cancelled');
  },
  TEST_TIMEOUT_MS,
);

it(
  'keeps a saved connection across a reload, its password only when asked to',
  async () => {
    await page.click('#tab-connection');
    await page.fill('#field-name', 'e2e without password');
    await page.click('text=Save connection');
    await page.fill('#field-name', 'e2e with password');
    await page.check('#field-rememberPassword');
    await page.click('text=Save connection');
    await page.reload();
    await page.click('#tab-connection');
    expect(await page.locator('.saved-label').allTextContents()).toEqual([
      'e2e with password',
      'e2e without password',
    ]);
    // Every stored form that holds a password was saved with "remember password" ticked, and no
    // other entry holds it.
    const stored: Record<string, string> = await page.evaluate(() => ({ ...localStorage }));
    const formKeys = ['sqlgate.console.connections', 'sqlgate.console.current'];
    const forms = formKeys.flatMap((key) => {
      const value: unknown = JSON.parse(stored[key] ?? '[]');
      return Array.isArray(value) ? value : [value];
    });
    for (const [key, text] of Object.entries(stored)) {
      if (!formKeys.includes(key) && database.password)
        expect(text).not.toContain(database.password);
    }
    expect(forms.length).toBeGreaterThanOrEqual(3);
    for (const form of forms) {
      expect({ remembered: form.rememberPassword, hasPassword: form.password !== '' }).toEqual({
        remembered: form.password !== '',
        hasPassword: form.password !== '',
      });
    }
    expect(forms.find((form) => form.name === 'e2e without password')?.password).toBe('');
    expect(forms.find((form) => form.name === 'e2e with password')?.password).toBe(
      database.password,
    );
    await page.click('[aria-label="Use e2e without password"]');
    expect(await page.inputValue('#field-password')).toBe('');
    await page.click('[aria-label="Use e2e with password"]');
    expect(await page.inputValue('#field-password')).toBe(database.password ?? '');
    await page.click('text=Test connection');
    await page.waitForFunction(() =>
      /Connected|failed/.test(
        document.querySelector('[data-testid=connection-status]')?.textContent ?? '',
      ),
    );
    expect(await page.textContent('[data-testid=connection-status]')).toMatch(
      /^Connected: PostgreSQL 1\d/,
    );
  },
  TEST_TIMEOUT_MS,
);

it(
  'exports a result as CSV equal to psql’s, and as JSON equal to the rows',
  async () => {
    const query =
      "SELECT g AS n, md5(g::text) AS h, NULL::text AS nothing, '' AS empty, E'a,\"b\\nc' AS tricky, 1.50::numeric AS num, now() > '2000-01-01' AS later FROM generate_series(1, 5) AS g ORDER BY g";
    await run(query);
    const [csvDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.click('text=Export CSV'),
    ]);
    const csv = readFileSync((await csvDownload.path()) as string, 'utf8');
    expect(csvDownload.suggestedFilename()).toBe('statement-1.csv');
    const records = parseCsv(csv, '');
    expect(records).toEqual(parseCsv(psqlCsv(query), PSQL_NULL));
    expect(records[1]).toEqual([
      '1',
      'c4ca4238a0b923820dcc509a6f75849b',
      null,
      '',
      'a,"b\nc',
      '1.50',
      't',
    ]);
    // The CSV holds the rows the grid shows.
    expect(await gridRows()).toEqual(
      records.slice(1).map((record) => record.map((value) => (value === 't' ? 'true' : value))),
    );

    const [jsonDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.click('text=Export JSON'),
    ]);
    const rows = JSON.parse(readFileSync((await jsonDownload.path()) as string, 'utf8'));
    expect(rows).toHaveLength(5);
    expect(rows[0]).toEqual({
      n: 1,
      h: 'c4ca4238a0b923820dcc509a6f75849b',
      nothing: null,
      empty: '',
      tricky: 'a,"b\nc',
      num: '1.50',
      later: true,
    });
  },
  TEST_TIMEOUT_MS,
);

it(
  'offers the data of a lone COPY ... TO STDOUT as a download',
  async () => {
    const summary = await run(
      "COPY (SELECT 1 AS a, 'x,y' AS b) TO STDOUT WITH (FORMAT csv, HEADER)",
    );
    expect(summary).toContain('Succeeded');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download COPY data' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('copy.csv');
    expect(readFileSync((await download.path()) as string, 'utf8')).toBe('a,b\n1,"x,y"\n');
    // A COPY that fails after its first bytes is cut short, not "unreachable".
    expect(
      await run('COPY (SELECT g, 1 / (g - 50000) FROM generate_series(1, 100000) AS g) TO STDOUT'),
    ).toBe('Cut short · The COPY data was cut after it began: the COPY failed partway');
  },
  TEST_TIMEOUT_MS,
);

it(
  'exports with the settings and text of the run, and never runs a write or a script’s statement again',
  async () => {
    await sql('DROP TABLE IF EXISTS console_w; CREATE TABLE console_w (id int)');
    // The form changes after the run: the export still reads the run's database.
    await run('SELECT current_database() AS db /* the text as sent */');
    await setField('database', 'postgres');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('text=Export CSV')]);
    expect(readFileSync((await csv.path()) as string, 'utf8')).toBe(
      `db\r\n${database.database}\r\n`,
    );
    await setField('database', database.database);

    // A write run alone is refused by PostgreSQL (read-only); nothing is inserted again.
    await run('INSERT INTO console_w VALUES (1) RETURNING id');
    await page.click('text=Export CSV');
    await page.waitForSelector('.toast');
    expect(await page.textContent('.toast')).toMatch(
      /^Export failed: cannot execute INSERT in a read-only transaction/,
    );
    expect(await sql('SELECT count(*)::int AS n FROM console_w')).toEqual([{ n: 1 }]);

    // A statement of a script may depend on the statements before it: not run alone.
    await page.evaluate(() =>
      document.querySelectorAll('.toast').forEach((toast) => toast.remove()),
    );
    await run("SET search_path TO pg_catalog;\nSELECT 'after SET' AS x;");
    await page.click('.results [role=tab] >> text=2. SELECT');
    await page.click('text=Export CSV');
    await page.waitForSelector('.toast');
    expect(await page.textContent('.toast')).toMatch(
      /^CSV export runs the statement again on its own/,
    );
    await sql('DROP TABLE console_w');
  },
  TEST_TIMEOUT_MS,
);

it(
  'tells what a script that manages its own transactions kept, and shows PostgreSQL’s message',
  async () => {
    await sql('DROP TABLE IF EXISTS console_own; CREATE TABLE console_own (id int)');
    const summary = await run(
      'BEGIN; INSERT INTO console_own VALUES (1); COMMIT;\nBEGIN; INSERT INTO console_own VALUES (2);',
    );
    expect(summary).toContain(
      'what they committed stays; the transaction left open was rolled back',
    );
    expect(summary).not.toMatch(/nothing was kept|each statement kept/);
    expect(await sql('SELECT id FROM console_own')).toEqual([{ id: 1 }]);
    const failed = await run('SELECT 1; SELECT 1/0');
    expect(failed).toContain(
      'One or more statements failed · 22012: division by zero · line 1, column 11',
    );
    expect(await page.textContent('.statement-error')).toContain('division by zero');
    await sql('DROP TABLE console_own');
  },
  TEST_TIMEOUT_MS,
);

it(
  'stops a streamed result when Cancel is pressed, says why, and offers no CSV of what was cut',
  async () => {
    const marker = `console_stream_${Date.now()}`;
    await setField('maxRows', '1000000');
    await type(
      `SELECT g AS ${marker}, repeat('x', 200) AS pad FROM generate_series(1, 20000000) AS g`,
    );
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() =>
      /receiving/.test(document.querySelector('[data-testid=statement-meta]')?.textContent ?? ''),
    );
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.waitForFunction(() => !document.body.classList.contains('is-running'));
    // sqlgate's own answer to the cancel says what happened.
    expect(await page.textContent('[data-testid=run-summary]')).toMatch(
      /^Cancelled · 57014: canceling statement due to user request/,
    );
    // A cancel is told as one, in the statement's neutral note rather than as its error.
    expect(await page.textContent('[data-testid=statement-cancelled]')).toContain('57014');
    const shown = await page.textContent('[data-testid=statement-meta]');
    await page.waitForTimeout(300);
    expect(await page.textContent('[data-testid=statement-meta]')).toBe(shown);
    // Its rows are partial: a cancelled statement offers no export.
    expect(await page.locator('[data-action=export-csv]').count()).toBe(0);
    // The 20 million rows' statement is gone from PostgreSQL: it was stopped, not read to its end.
    await eventually(
      async () =>
        (
          await sql(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
            [`%${marker}%`],
          )
        )[0]?.n === 0,
    );
  },
  TEST_TIMEOUT_MS,
);

it(
  'says what a cancelled streamed script kept, and offers binary COPY data as a download',
  async () => {
    await sql('DROP TABLE IF EXISTS console_cancel_t; CREATE TABLE console_cancel_t (id int)');
    await type('INSERT INTO console_cancel_t VALUES (1);\nSELECT pg_sleep(20);');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.querySelectorAll('.results [role=tab]').length >= 1);
    // Cancelled while the sleep runs.
    await eventually(
      async () =>
        (
          await sql(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'SELECT pg_sleep(20)%'",
          )
        )[0]?.n === 1,
    );
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.waitForFunction(() => !document.body.classList.contains('is-running'));
    const summary = (await page.textContent('[data-testid=run-summary]')) ?? '';
    expect(summary).toMatch(/^Cancelled · /);
    expect(summary).toContain('Transaction rolled back: nothing was kept');
    expect(await tabTitles()).toEqual(['1. INSERT', '2. SELECT']);
    expect(await sql('SELECT count(*)::int AS n FROM console_cancel_t')).toEqual([{ n: 0 }]);

    await sql('INSERT INTO console_cancel_t VALUES (7)');
    expect(
      await run('COPY (DELETE FROM console_cancel_t RETURNING id) TO STDOUT (FORMAT binary)'),
    ).toBe('Succeeded');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download COPY data' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('copy.bin');
    expect(
      readFileSync((await download.path()) as string)
        .subarray(0, 11)
        .toString('latin1'),
    ).toBe('PGCOPY\n\xff\r\n\0');
    await sql('DROP TABLE console_cancel_t');
  },
  TEST_TIMEOUT_MS,
);

it(
  'refuses to export cached rows, and shows every value whole',
  async () => {
    await type(`SELECT 99999.99::numeric AS num, 123456789012::int8 AS n, '2026-11-26'::date AS d`);
    await run();
    const cut = await page.$$eval('.grid-rows [role=gridcell]', (cells) =>
      cells.filter((cell) => cell.scrollWidth > cell.clientWidth).map((cell) => cell.textContent),
    );
    expect(cut).toEqual([]);

    await setField('cache', 'on');
    await run('SELECT 5 AS cached_value');
    await run('SELECT 5 AS cached_value');
    await page.click('[data-action=export-csv]');
    await page.waitForSelector('.toast');
    expect(await page.textContent('.toast')).toMatch(/^These rows came from the result cache/);
    await setField('cache', '');
  },
  TEST_TIMEOUT_MS,
);

it(
  'stops a CSV export when its button is pressed again',
  async () => {
    const marker = `console_slow_export_${Date.now()}`;
    // The same text, slower the second time: a sleep that depends on a table the export sees.
    await sql(
      `DROP TABLE IF EXISTS ${marker}; CREATE TABLE ${marker} (seconds int); INSERT INTO ${marker} VALUES (0)`,
    );
    await run(`SELECT pg_sleep((SELECT seconds FROM ${marker})) AS ${marker}_s`);
    await sql(`UPDATE ${marker} SET seconds = 20`);
    await page.click('[data-action=export-csv]');
    await page.waitForFunction(
      () => document.querySelector('[data-action=export-csv]')?.textContent === 'Stop export',
    );
    const active = async () =>
      (
        await sql(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
          [`%${marker}_s%`],
        )
      )[0]?.n;
    await eventually(async () => (await active()) === 1);
    await page.click('[data-action=export-csv]');
    await page.waitForSelector('.toast');
    expect(await page.textContent('.toast')).toBe('Export stopped');
    // Gone long before its 20 s: stopped.
    await eventually(async () => (await active()) === 0);
    expect(await page.textContent('[data-action=export-csv]')).toBe('Export CSV');
    await sql(`DROP TABLE ${marker}`);
  },
  TEST_TIMEOUT_MS,
);

it(
  'shows a result of 100,000 rows with a few hundred elements at most, and any row on scrolling',
  async () => {
    await run("SELECT g AS n, 'row ' || g AS label FROM generate_series(1, 100000) AS g");
    expect(await page.textContent('[data-testid=statement-meta]')).toContain('100000 shown');
    expect(await page.locator('[data-testid=truncated]').count()).toBe(0);
    expect(await page.locator('.grid-row').count()).toBeLessThan(120);
    for (const target of [50_000, 100_000, 1]) {
      await page.$eval(
        '.grid-viewport',
        (viewport, row) => {
          viewport.scrollTop = (row - 1) * 26;
        },
        target,
      );
      await page.waitForFunction(
        (row) =>
          [...document.querySelectorAll('.grid-rows .grid-rownum')].some(
            (cell) => cell.textContent === String(row),
          ),
        target,
      );
      const rows = await gridRows();
      expect(rows).toContainEqual([String(target), `row ${target}`]);
      expect(rows.length).toBeLessThan(120);
    }
  },
  TEST_TIMEOUT_MS,
);

it(
  'shows a banner when maxRows cut a result',
  async () => {
    await setField('maxRows', '5');
    await run('SELECT g FROM generate_series(1, 10) AS g');
    expect(await page.textContent('[data-testid=truncated]')).toContain('only the first 5 rows');
  },
  TEST_TIMEOUT_MS,
);

it(
  'updates the statistics view after queries, and clears the cache',
  async () => {
    await setField('cache', 'on');
    await run('SELECT 41 + 1 AS answer');
    await run('SELECT 41 + 1 AS answer');
    expect(await page.textContent('[data-testid=statement-meta]')).toContain('cache: hit');
    await page.click('#tab-stats');
    const figure = (name: string) => page.textContent(`[data-figure="${name}"]`);
    await page.waitForFunction(
      () => Number(document.querySelector('[data-figure="Entries"]')?.textContent) >= 1,
    );
    const before = Number(await figure('Statements'));
    await page.click('#tab-query');
    await run('SELECT 1; SELECT 2');
    await page.click('#tab-stats');
    await page.waitForFunction(
      (count) =>
        Number(document.querySelector('[data-figure="Statements"]')?.textContent) >= count + 2,
      before,
    );
    expect(await page.textContent('[data-testid=pools]')).toContain(
      `${database.host}:${database.port}:${database.user}:${database.database}`,
    );
    expect(await page.getAttribute('.line-hit-rate', 'points')).not.toBe('');
    await page.click('[data-testid=clear-cache]');
    await page.waitForFunction(
      () => document.querySelector('[data-figure="Entries"]')?.textContent === '0',
    );
  },
  TEST_TIMEOUT_MS,
);

it(
  'lists runs in the history and runs one again',
  async () => {
    await run('SELECT 101 AS first_run');
    await run('SELECT 202 AS second_run');
    await page.click('#tab-history');
    const entries = page.locator('[data-testid=history] .history-sql');
    expect(await entries.allTextContents()).toEqual([
      'SELECT 202 AS second_run',
      'SELECT 101 AS first_run',
    ]);
    // Each button names the connection it would run on: the form's, now.
    const button = page.locator('[data-testid=history] li:nth-child(2) [data-action=run-again]');
    expect(await button.textContent()).toBe(
      `Run again on ${database.user}@${database.host}:${database.port}/${database.database}`,
    );
    await button.click();
    await page.waitForFunction(() => !document.body.classList.contains('is-running'));
    expect(await page.textContent('.grid-header')).toContain('first_run');
    await page.reload();
    await page.click('#tab-history');
    expect(await page.locator('[data-testid=history] .history-sql').count()).toBe(3);
  },
  TEST_TIMEOUT_MS,
);

it(
  'is driven by the keyboard, and fits 1280×800 and 390 px in light and dark themes',
  async () => {
    await page.focus('#tab-query');
    await page.keyboard.press('ArrowRight');
    expect(await page.isVisible('#panel-connection')).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-connection');
    await page.keyboard.press('ArrowLeft');
    await page.click('.cm-content');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Run');

    await run('SELECT 1 AS a, 2 AS b');
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 800 },
    ]) {
      await page.setViewportSize(viewport);
      for (const view of ['query', 'connection', 'history', 'stats']) {
        await page.click(`#tab-${view}`);
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - window.innerWidth,
        );
        expect({ viewport: viewport.width, view, overflow }).toEqual({
          viewport: viewport.width,
          view,
          overflow: 0,
        });
      }
    }
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.click('.theme'); // light
    expect(await background()).toBe('rgb(255, 255, 255)');
    await page.click('.theme'); // dark
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
    expect(await background()).toBe('rgb(21, 25, 29)');
    await page.reload();
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
  },
  TEST_TIMEOUT_MS,
);

describe('a page of another origin', () => {
  let other: Server;
  let otherUrl: string;

  beforeAll(async () => {
    other = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    await sql('DROP TABLE IF EXISTS console_cross_origin');
  });
  afterAll(async () => {
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
  });

  it(
    'can neither run SQL nor read statistics',
    async () => {
      const elsewhere = await browser.context.newPage();
      await elsewhere.goto(otherUrl);
      const body = JSON.stringify({
        host: database.host,
        port: database.port,
        user: database.user,
        password: database.password,
        database: database.database,
        sql: 'CREATE TABLE console_cross_origin (id int)',
      });
      const outcomes = await elsewhere.evaluate(
        async ({ url, body }) => {
          const attempt = async (init: RequestInit, path = '/api/query') => {
            try {
              const response = await fetch(url + path, init);
              return `answered ${response.status} ${response.type}`;
            } catch (error) {
              return `refused: ${(error as Error).name}`;
            }
          };
          return {
            json: await attempt({
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
            }),
            simple: await attempt({
              method: 'POST',
              mode: 'no-cors',
              headers: { 'content-type': 'text/plain' },
              body,
            }),
            stats: await attempt({}, '/api/stats/pools'),
          };
        },
        { url: sqlgate.url, body },
      );
      await elsewhere.close();
      expect(outcomes).toEqual({
        json: 'refused: TypeError',
        // An opaque answer: the page learns nothing, and sqlgate refused it (no table below).
        simple: 'answered 0 opaque',
        stats: 'refused: TypeError',
      });
      expect(await sql("SELECT to_regclass('console_cross_origin') AS t")).toEqual([{ t: null }]);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a server with a default target (sqlgate --demo's embedded database)", () => {
  it(
    'opens the form on it over what the browser kept, and runs there with the credentials the server holds',
    async () => {
      const sslMode = 'prefer' as const;
      await using server = await startServer({
        port: 0,
        hostname: '127.0.0.1',
        logLevel: 'silent',
        configuredTargets: {
          default: { ...(target() as Omit<ConnectionTarget, 'sslMode'>), sslMode },
        },
      });
      const own = await browser.context.newPage();
      const ownProblems = watchProblems(own);
      try {
        await own.goto(`${server.url}/`);
        await own.evaluate(() =>
          localStorage.setItem(
            'sqlgate.console.current',
            JSON.stringify({ host: 'elsewhere.invalid', port: '1', user: 'x', maxRows: '7' }),
          ),
        );
        await own.reload();
        await own.click('#tab-connection');
        const shown = await own.$$eval(
          '#field-host, #field-port, #field-user, #field-database, #field-password, #field-maxRows',
          (inputs) => (inputs as HTMLInputElement[]).map((input) => [input.id, input.value]),
        );
        expect(Object.fromEntries(shown)).toEqual({
          'field-host': database.host,
          'field-port': String(database.port),
          'field-user': database.user,
          'field-database': database.database,
          'field-password': '',
          'field-maxRows': '7',
        });
        await own.click('#tab-query');
        await own.click('.cm-content');
        await own.keyboard.press('Control+A');
        await own.keyboard.press('Delete');
        await own.keyboard.insertText('SELECT current_user AS who');
        await own.keyboard.press('Control+Enter');
        await own.waitForFunction(() => !document.body.classList.contains('is-running'));
        expect(await own.textContent('[data-testid=run-summary]')).toContain('Succeeded');
        expect(
          await own.$$eval('.grid-rows [role=gridcell]', (cells) =>
            cells.map((cell) => cell.textContent),
          ),
        ).toEqual([database.user]);
      } finally {
        await own.close();
      }
      expect(ownProblems).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
