/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The callbacks given to page.evaluate run in the browser, with its globals.
/**
 * The console as a workbench: saved queries (kept across a reload, exported to a file and imported
 * back), links that open some SQL and carry nothing else, and what a run shows when it is a script,
 * is cancelled or cannot reach the database. Debian's Chromium against sqlgate's built server as a
 * child process, started once with a CONFIG_FILE naming connections, and the real PostgreSQL; one
 * page, reloaded with an empty localStorage before each test.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { eventually } from '@sqlgate/testing';
import { startChromium, type RunningChromium } from '@sqlgate/testing/chromium';
import { fillConnectionForm, replaceEditorText, watchProblems } from './browser';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { database, sql } from './support';

const TEST_TIMEOUT_MS = 60_000;
const KEY = 'workbench-key-0123456789abcdef';

let sqlgate: SqlgateProcess;
let browser: RunningChromium;
let page: Page;
let problems: string[];
/** Bodies of the page's POST /api/query requests since the last reload. */
let queries: string[];
let configDirectory: string;

/** Two named connections, one reaching the test database, and a key for it. */
function configFile(): string {
  configDirectory = mkdtempSync(join(tmpdir(), 'sqlgate-console-workbench-'));
  const path = join(configDirectory, 'sqlgate.json');
  writeFileSync(
    path,
    JSON.stringify({
      connections: {
        app: { url: { env: 'SG_WORKBENCH_APP_URL' } },
        reports: { url: 'postgresql://reader:reader-password@127.0.0.1:1/reports' },
      },
      keys: [{ id: 'workbench', secret: KEY, connections: ['app'] }],
    }),
  );
  return path;
}

beforeAll(async () => {
  [sqlgate, browser] = await Promise.all([
    startSqlgateProcess({
      CONFIG_FILE: configFile(),
      SG_WORKBENCH_APP_URL: database.connectionString,
      STATS_TOKEN: 'workbench-stats-token',
    }),
    startChromium(),
  ]);
  page = await browser.context.newPage();
  problems = watchProblems(page);
  page.on('request', (request) => {
    if (request.url().endsWith('/api/query')) queries.push(request.postData() ?? '');
  });
}, 60_000);

afterAll(async () => {
  await page?.close();
  await browser?.close();
  await sqlgate?.stop();
});

beforeEach(async () => {
  await page.goto(`${sqlgate.url}/`);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  queries = [];
});

afterEach(() => {
  expect(problems).toEqual([]);
});

async function useTestDatabase(password = database.password ?? ''): Promise<void> {
  await page.click('#tab-connection');
  await page.click('#tab-login-credentials');
  await fillConnectionForm(page, { ...database, password });
}

function type(text: string): Promise<void> {
  return replaceEditorText(page, text);
}

/** Runs `text` and waits until PostgreSQL runs its statement that holds `marker`. */
async function runUntilActive(text: string, marker: string): Promise<void> {
  await type(text);
  await page.keyboard.press('Control+Enter');
  await eventually(async () => {
    const running = await sql(
      "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
      [`%${marker}%`],
    );
    expect(running).toHaveLength(1);
  });
}

async function waitForRunEnd(): Promise<string> {
  await page.waitForFunction(() => !document.body.classList.contains('is-running'));
  return (await page.textContent('[data-testid=run-summary]')) ?? '';
}

async function run(text: string): Promise<string> {
  await type(text);
  await page.keyboard.press('Control+Enter');
  return waitForRunEnd();
}

/** The editor's text, line by line as CodeMirror shows it. */
async function editorText(): Promise<string> {
  return page.$$eval('.cm-content .cm-line', (lines) =>
    lines.map((line) => line.textContent ?? '').join('\n'),
  );
}

async function savedStatus(): Promise<string> {
  return (await page.textContent('[data-testid=saved-status]')) ?? '';
}

/** The saved queries as the Saved view lists them: `folder / name` in the order shown. */
async function savedList(): Promise<string[]> {
  return page.$$eval('.saved-folder', (folders) =>
    folders.flatMap((folder) =>
      [...folder.querySelectorAll('.saved-query-name')].map(
        (name) => `${folder.querySelector('h3')?.textContent} / ${name.textContent}`,
      ),
    ),
  );
}

async function importFile(path: string): Promise<string> {
  await page.$eval('[data-testid=saved-status]', (status) => {
    status.textContent = '';
  });
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.click('[data-action=import-saved]'),
  ]);
  await chooser.setFiles(path);
  await page.waitForFunction(() =>
    /Import|nothing was imported/.test(
      document.querySelector('[data-testid=saved-status]')?.textContent ?? '',
    ),
  );
  return savedStatus();
}

/** Whether the pseudo-element after a field's label shows a mark. */
async function markShown(field: string): Promise<boolean> {
  return page.$eval(`label[for=field-${field}] > span`, (label) =>
    getComputedStyle(label, '::after').content.includes('check this field'),
  );
}

it(
  'keeps a saved query across a reload, runs, renames and deletes it, exports it and imports it back into an empty storage',
  async () => {
    await useTestDatabase();
    await type("SELECT 'saved' AS kind, 42 AS answer");
    await page.click('[data-action=save]');
    expect(await page.getAttribute('#tab-saved', 'aria-selected')).toBe('true');
    await page.fill('#saved-name', 'the answer');
    await page.fill('#saved-folder', 'reports');
    await page.click('[data-action=save-query]');
    expect(await savedStatus()).toBe('Saved “reports / the answer”');
    await page.click('#tab-query');
    await type('SELECT 2 AS other');
    await page.click('[data-action=save]');
    await page.fill('#saved-name', 'other');
    await page.fill('#saved-folder', '');
    await page.click('[data-action=save-query]');

    await page.reload();
    // The password is not remembered: typed again after the reload.
    await useTestDatabase();
    await page.click('#tab-saved');
    expect(await savedList()).toEqual(['No folder / other', 'reports / the answer']);
    await page.click('.saved-query[data-name="the answer"] [data-action=run]');
    expect(await waitForRunEnd()).toContain('Succeeded');
    expect(
      await page.$$eval('.grid-rows [role=gridcell]', (c) => c.map((x) => x.textContent)),
    ).toEqual(['saved', '42']);

    await page.click('#tab-saved');
    await page.click('.saved-query[data-name="other"] [data-action=rename]');
    await page.fill('.saved-query.rename input[name=name]', 'the answer');
    await page.fill('.saved-query.rename input[name=folder]', 'reports');
    await page.click('[data-action=confirm-rename]');
    expect(await savedStatus()).toBe(
      '“reports / the answer” already exists: rename or delete it first',
    );
    await page.fill('.saved-query.rename input[name=name]', 'second');
    await page.click('[data-action=confirm-rename]');
    expect(await savedList()).toEqual(['reports / second', 'reports / the answer']);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('[data-action=export-saved]'),
    ]);
    expect(download.suggestedFilename()).toBe('sqlgate-saved-queries.json');
    const exported = readFileSync((await download.path()) as string, 'utf8');
    const file = JSON.parse(exported) as {
      format: string;
      queries: { name: string; sql: string }[];
    };
    expect(file.format).toBe('sqlgate-saved-queries');
    expect(file.queries.map((query) => [query.name, query.sql])).toEqual([
      ['second', 'SELECT 2 AS other'],
      ['the answer', "SELECT 'saved' AS kind, 42 AS answer"],
    ]);
    expect(exported).not.toContain(database.password ?? 'no password');
    const exportPath = join(configDirectory, 'export.json');
    writeFileSync(exportPath, exported);
    await page.click('.saved-query[data-name="second"] [data-action=delete]');
    expect(await savedList()).toEqual(['reports / the answer']);

    // A fresh storage: the file brings both back; the same file again changes nothing.
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await page.click('#tab-saved');
    expect(await savedList()).toEqual([]);
    expect(await importFile(exportPath)).toBe(
      'Imported export.json: 2 added, 0 replaced, 0 unchanged',
    );
    expect(await savedList()).toEqual(['reports / second', 'reports / the answer']);
    expect(await importFile(exportPath)).toBe(
      'Imported export.json: 0 added, 0 replaced, 2 unchanged',
    );

    // A bad file is refused whole, with its reason, and the saved queries stay as they were.
    const badPath = join(configDirectory, 'bad.json');
    const bad = JSON.parse(exported) as { queries: unknown[] };
    bad.queries.push({ name: 'new one', folder: '' }, { name: 'never', folder: '', sql: 'x' });
    writeFileSync(badPath, JSON.stringify(bad));
    expect(await importFile(badPath)).toBe(
      'bad.json: Entry 3: needs a name, a folder and sql, each a text, so nothing was imported',
    );
    await page.reload();
    await page.click('#tab-saved');
    expect(await savedList()).toEqual(['reports / second', 'reports / the answer']);
  },
  TEST_TIMEOUT_MS,
);

it(
  'makes a link that opens the SQL in the editor, runs nothing, and holds no credentials',
  async () => {
    await useTestDatabase();
    await page.click('#tab-connection');
    await page.fill('#field-name', 'secret-named-connection');
    await page.click('#tab-query');
    const text = "SELECT 'ünïcode 🐘' AS word, $$a+b/c?&#$$ AS odd;\nSELECT 2;";
    await type(text);
    await page.click('[data-action=copy-link]');
    const link = await page.inputValue('[data-testid=share-link]');
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}${url.search}`).toBe(`${sqlgate.url}/`);
    expect(url.hash).toMatch(/^#sql=[A-Za-z0-9_-]+$/);
    for (const secret of [
      database.password ?? 'no password',
      database.user,
      database.database,
      'secret-named-connection',
    ]) {
      expect(link).not.toContain(secret);
      expect(decodeURIComponent(link)).not.toContain(secret);
    }

    // Opened in a page of its own: the editor holds the SQL, nothing ran, the address drops it.
    await page.evaluate(() => localStorage.clear());
    await page.goto('about:blank');
    await page.goto(link);
    await page.waitForSelector('.cm-content');
    expect(await editorText()).toBe(text);
    expect(page.url()).toBe(`${sqlgate.url}/`);
    expect(queries).toEqual([]);
    // A reload keeps the SQL (and the link's fragment is gone, so it does not come back over edits).
    await type('SELECT 3');
    await page.reload();
    expect(await editorText()).toBe('SELECT 3');

    // Pasted into the address bar of an open console: only the fragment changes.
    await page.goto(link);
    await page.waitForFunction((expected) => {
      const lines = [...document.querySelectorAll('.cm-content .cm-line')];
      return lines.map((line) => line.textContent).join('\n') === expected;
    }, text);
    expect(queries).toEqual([]);
  },
  TEST_TIMEOUT_MS,
);

it(
  'shows the last statement of a script that returned rows',
  async () => {
    await useTestDatabase();
    const summary = await run(
      [
        'SELECT 1 AS first;',
        "SELECT 'shown' AS last_rows;",
        'CREATE TEMP TABLE workbench_t (id int);',
        'INSERT INTO workbench_t VALUES (1);',
      ].join('\n'),
    );
    expect(summary).toContain('Succeeded');
    expect(await page.textContent('.results [role=tab][aria-selected=true]')).toBe('2. SELECT');
    expect(
      await page.$$eval('.grid-rows [role=gridcell]', (c) => c.map((x) => x.textContent)),
    ).toEqual(['shown']);
  },
  TEST_TIMEOUT_MS,
);

it(
  'shows a cancelled pg_sleep(30) as cancelled, not as a failure',
  async () => {
    await useTestDatabase();
    const marker = `workbench_cancel_${Date.now()}`;
    await runUntilActive(`SELECT pg_sleep(30) AS ${marker}`, marker);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const summary = await waitForRunEnd();
    expect(summary).toMatch(/^Cancelled · 57014: canceling statement due to user request/);
    expect(await page.getAttribute('[data-testid=run-summary]', 'class')).toBe('summary cancelled');
    expect(await page.textContent('[data-testid=statement-cancelled]')).toMatch(
      /^Cancelled · 57014/,
    );
    const tab = await page.getAttribute('.results [role=tab][aria-selected=true]', 'class');
    expect(tab).toContain('cancelled');
    expect(tab).not.toContain('failed');
    // Nothing in the results is told as an error.
    expect(await page.locator('.results [role=alert], .statement-error').count()).toBe(0);
    await page.click('#tab-history');
    expect(await page.getAttribute('.history-entry', 'class')).toBe('history-entry cancelled');
  },
  TEST_TIMEOUT_MS,
);

it(
  'marks the statement of a script that Cancel stopped as cancelled, with nothing to export',
  async () => {
    await useTestDatabase();
    const marker = `workbench_script_cancel_${Date.now()}`;
    await runUntilActive(`SELECT 1 AS a; SELECT pg_sleep(30) AS ${marker}; SELECT 3 AS c;`, marker);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await waitForRunEnd()).toMatch(/^Cancelled/);
    const tab = await page.getAttribute('.results [role=tab][aria-selected=true]', 'class');
    expect(tab).toContain('cancelled');
    expect(await page.textContent('[data-testid=statement-cancelled]')).toMatch(/^Cancelled · /);
    expect(await page.textContent('[data-testid=statement-meta]')).not.toContain(
      'the answer stopped before this statement ended',
    );
    expect(await page.locator('[data-action=export-csv]').count()).toBe(0);

    // The script's first statement stopped: sqlgate answers before any row, as JSON.
    const first = `workbench_first_cancel_${Date.now()}`;
    await runUntilActive(`SELECT pg_sleep(30) AS ${first}; SELECT 2 AS b;`, first);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await waitForRunEnd()).toMatch(/^Cancelled/);
    const firstTab = await page.getAttribute('.results [role=tab][aria-selected=true]', 'class');
    expect(firstTab).toContain('cancelled');
    expect(firstTab).not.toContain('failed');
    expect(await page.locator('.statement-error').count()).toBe(0);
  },
  TEST_TIMEOUT_MS,
);

it(
  'opens the connection view with the missing fields marked when the first run has no usable connection',
  async () => {
    await page.click('#tab-connection');
    for (const field of ['host', 'user', 'database']) await page.fill(`#field-${field}`, '');
    await page.click('#tab-query');
    await type('SELECT 1');
    await page.click('button.primary:text-is("Run")');
    expect(await page.isVisible('#panel-connection')).toBe(true);
    expect(await page.textContent('[data-testid=connection-status]')).toBe("'host' is required");
    for (const field of ['host', 'user', 'database']) {
      expect(await page.getAttribute(`#field-${field}`, 'aria-invalid')).toBe('true');
      expect(await page.getAttribute(`#field-${field}`, 'aria-describedby')).toBe(
        'connection-status',
      );
      expect(await markShown(field)).toBe(true);
    }
    expect(await page.getAttribute('#field-port', 'aria-invalid')).toBeNull();
    expect(await markShown('port')).toBe(false);
    expect(queries).toEqual([]);
    // A field loses its mark once edited.
    await page.fill('#field-host', database.host);
    expect(await page.getAttribute('#field-host', 'aria-invalid')).toBeNull();

    // Settings the database refuses: the run's answer names the field.
    await useTestDatabase('not-the-password');
    await type('SELECT 1');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('#panel-connection:not([hidden])');
    expect(await page.getAttribute('#field-password', 'aria-invalid')).toBe('true');
    expect(await markShown('password')).toBe(true);
    expect(await page.textContent('[data-testid=connection-status]')).toMatch(/^28P01: /);
  },
  TEST_TIMEOUT_MS,
);

it(
  'offers the named connections of CONFIG_FILE in the key login, by name only',
  async () => {
    const html = await (await fetch(`${sqlgate.url}/`)).text();
    expect(html).toContain('sqlgate-connection-names');
    for (const secret of [database.connectionString, 'reader-password', KEY, '127.0.0.1:1']) {
      expect(html).not.toContain(secret);
    }
    await page.click('#tab-connection');
    await page.click('#tab-login-key');
    const choices = page.getByRole('group', { name: 'Connections on this server' });
    expect(await choices.locator('button').allTextContents()).toEqual(['app', 'reports']);
    await choices.getByRole('button', { name: 'Use connection app' }).click();
    expect(await page.inputValue('#field-connection')).toBe('app');
    await page.fill('#field-token', KEY);
    await page.click('#tab-query');
    expect(await page.textContent('[data-testid=current-connection]')).toBe('connection app');
    expect(await run('SELECT current_user AS who')).toContain('Succeeded');
    expect(JSON.parse(queries[0] ?? '{}')).toMatchObject({ connection: 'app' });
  },
  TEST_TIMEOUT_MS,
);
