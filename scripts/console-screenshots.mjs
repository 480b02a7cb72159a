// Takes the README's screenshots of the browser console: a throwaway PostgreSQL (@sqlgate/testing),
// the built server with its console, and Debian's Chromium driven by playwright-core, headless and
// off the network. Writes docs/console-*.png: the results beside the schema browser in the light
// and the dark theme, a plan, the saved queries, an error, the statistics, and a narrow window.
// Run: npm run docs:screenshots
/* global document, fetch */ // page callbacks run in the browser; fetch is Node's own.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '@sqlgate/http-express';
import { startTestDatabase } from '@sqlgate/testing';
import { startChromium } from '@sqlgate/testing/chromium';

const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs');
const database = await startTestDatabase({ tls: false });
const server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
const browser = await startChromium();

/** Clicks the theme button (system, light, dark, in turn) until the page is in `theme`. */
async function chooseTheme(page, theme) {
  for (let click = 0; click < 3; click++) {
    if ((await page.textContent('.theme')) === `Theme: ${theme}`) return;
    await page.click('.theme');
  }
  throw new Error(`the theme button never showed ${theme}`);
}

async function run(page, sql) {
  await page.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => !document.body.classList.contains('is-running'));
}

try {
  const page = await browser.context.newPage();
  await page.goto(`${server.url}/`);
  await page.click('#tab-connection');
  for (const field of ['host', 'port', 'user', 'password', 'database']) {
    await page.fill(`#field-${field}`, String(database[field]));
  }
  await page.fill('#field-name', 'local test database');
  await page.click('text=Save connection');
  await page.click('#tab-query');

  await run(
    page,
    [
      'CREATE SCHEMA shop;',
      'CREATE TABLE shop.product (id int PRIMARY KEY, name text, price numeric(8,2), tags text[]);',
      "INSERT INTO shop.product VALUES (1, 'Teapot', 24.50, '{kitchen,gift}'), (2, 'Kettle', 39.00, NULL),",
      "  (3, '', 5.25, '{}'), (4, 'Mug \"large\"', 7.90, '{kitchen}');",
      'CREATE TABLE shop.orders (id int PRIMARY KEY, product_id int NOT NULL REFERENCES shop.product,',
      '  quantity int NOT NULL DEFAULT 1);',
      'INSERT INTO shop.orders SELECT n, 1 + n % 4, 1 + n % 3 FROM generate_series(1, 500) AS n;',
      'ANALYZE shop.product, shop.orders;',
      'SELECT id, name, price, tags, price * 1.2 AS with_tax FROM shop.product ORDER BY id;',
    ].join('\n'),
  );
  // The schema browser beside the editor, with the product table open on its columns.
  await page.click('[data-testid=schema-toggle]');
  await page.click('[data-relation="shop.product"] > summary');
  await page.click('[data-relation="shop.orders"] > summary');
  await page.click('.results [role=tab] >> text=7. SELECT');
  await chooseTheme(page, 'light');
  await page.screenshot({ path: path.join(docs, 'console-results.png') });
  await chooseTheme(page, 'dark');
  await page.screenshot({ path: path.join(docs, 'console-results-dark.png') });
  await chooseTheme(page, 'light');

  // A plan: Explain analyze of a join, as a tree.
  await run(
    page,
    'SELECT p.name, sum(o.quantity) AS sold\n  FROM shop.orders o JOIN shop.product p ON p.id = o.product_id\n GROUP BY p.name ORDER BY sold DESC;',
  );
  await page.click('button:text-is("Explain analyze")');
  await page.locator('.plan-tree > .plan-node').waitFor();
  await page.screenshot({ path: path.join(docs, 'console-plan.png') });
  await page.click('[data-testid=schema-toggle]');

  // The Saved view, with the script saved in a folder and two more queries.
  const saved = [
    ['products with tax', 'shop'],
    ['largest tables', 'maintenance'],
    ['sessions', 'maintenance'],
  ];
  const texts = {
    'largest tables':
      "SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) AS size\n  FROM pg_class WHERE relkind = 'r'\n ORDER BY pg_total_relation_size(oid) DESC LIMIT 10;",
    sessions: 'SELECT pid, usename, state, query FROM pg_stat_activity;',
  };
  for (const [name, folder] of saved) {
    if (texts[name]) {
      await page.click('#tab-query');
      await page.click('.cm-content');
      await page.keyboard.press('Control+A');
      await page.keyboard.insertText(texts[name]);
    }
    await page.click('[data-action=save]');
    await page.fill('#saved-name', name);
    await page.fill('#saved-folder', folder);
    await page.click('[data-action=save-query]');
  }
  await page.screenshot({ path: path.join(docs, 'console-saved.png') });
  await page.click('#tab-query');

  await run(page, 'SELECT id\n  FROM generate_series(1, 3) AS id\n WHERE nmae IS NOT NULL;');
  await page.screenshot({ path: path.join(docs, 'console-error.png') });

  // Traffic while the statistics view refreshes: reads of a few texts, cached, so hits grow.
  await page.click('#tab-stats');
  const { host, port, user, password } = database;
  const target = { host, port, user, password, database: database.database };
  for (let second = 0; second < 16; second++) {
    await Promise.all(
      Array.from({ length: 2 + (second % 5) * 3 }, (_, i) =>
        fetch(`${server.url}/api/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...target, sql: `SELECT ${i % 4} AS n`, cache: true }),
        }).then((response) => response.arrayBuffer()),
      ),
    );
    await page.waitForTimeout(1000);
  }
  await page.screenshot({ path: path.join(docs, 'console-statistics.png') });

  await page.setViewportSize({ width: 390, height: 800 });
  await chooseTheme(page, 'dark');
  await page.click('#tab-query');
  await run(page, 'SELECT n, n * n AS square, NULL AS nothing FROM generate_series(1, 12) AS n;');
  await page.screenshot({ path: path.join(docs, 'console-narrow-dark.png') });
  console.log(
    'wrote docs/console-results.png, console-results-dark.png, console-plan.png, console-saved.png, console-error.png, console-statistics.png, console-narrow-dark.png',
  );
} finally {
  await browser.close();
  await server.close();
  await database.stop();
}
