/// <reference lib="dom" />
// The callbacks given to page.evaluate run in the browser, with its globals.
/**
 * The browser console logging in with a key or JWT and a connection name (docs/access.md) instead
 * of database credentials: Debian's Chromium against a server started with a CONFIG_FILE and the
 * real PostgreSQL. Every request the page makes is watched: none carries a target of its own, and
 * the key never reaches the browser's storage or a URL.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { eventually } from '@sqlgate/testing';
import { startChromium, type RunningChromium } from '@sqlgate/testing/chromium';
import { replaceEditorText, watchProblems } from './browser';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { database, sql } from './support';

const TEST_TIMEOUT_MS = 60_000;

const KEY = 'console-key-0123456789abcdef';
const LIMITED_KEY = 'console-limited-key-0123456789';
const JWT_SECRET = 'console-jwt-secret-of-at-least-32-bytes';
/** Typed into the password field before switching to the key: it must never be sent. */
const DECOY_PASSWORD = 'decoy-password-never-sent';
/** The fields that name a target of a request's own, which a request with a key must not carry. */
const TARGET_FIELDS = ['host', 'port', 'user', 'password', 'database', 'sslMode'];

interface SeenRequest {
  url: string;
  method: string;
  authorization: string | undefined;
  body: string | null;
}

let server: RunningServer;
let browser: RunningChromium;
let page: Page;
let problems: string[];
let seen: SeenRequest[];

/**
 * A CONFIG_FILE with one connection to the test database and keys without a role: statements run
 * as the connection's login. The JWT's role claim names that login too, which it may always take.
 */
function configFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sqlgate-console-keys-')), 'sqlgate.json');
  writeFileSync(
    path,
    JSON.stringify({
      connections: {
        app: { url: { env: 'SG_CONSOLE_APP_URL' } },
        other: { url: 'postgresql://x@127.0.0.1/x' },
      },
      keys: [
        { id: 'console', secret: KEY, connections: ['app'] },
        { id: 'limited', secret: LIMITED_KEY, connections: ['app'], rate: '1/h' },
      ],
      jwt: { secret: JWT_SECRET, connections: ['app'] },
    }),
  );
  return path;
}

beforeAll(async () => {
  const access = loadConfig({
    CONFIG_FILE: configFile(),
    SG_CONSOLE_APP_URL: database.connectionString,
  }).access;
  [server, browser] = await Promise.all([
    startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent', access }),
    startChromium(),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

beforeEach(async () => {
  page = await browser.context.newPage();
  problems = watchProblems(page);
  seen = [];
  page.on('request', (request) =>
    seen.push({
      url: request.url(),
      method: request.method(),
      authorization: request.headers()['authorization'],
      body: request.postData(),
    }),
  );
  await page.goto(`${server.url}/`);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
});

afterEach(async () => {
  await page.close();
  expect(problems).toEqual([]);
});

/** Opens the key tab with `token` and `connection`, after a password was typed in the other tab. */
async function logInWithKey(token: string, connection = 'app'): Promise<void> {
  await page.click('#tab-connection');
  await page.click('#tab-login-credentials');
  await page.fill('#field-password', DECOY_PASSWORD);
  await page.click('#tab-login-key');
  await page.fill('#field-connection', connection);
  await page.fill('#field-token', token);
  await page.click('#tab-query');
}

/** Runs `text` with Ctrl+Enter and waits for the run to end; gives the summary. */
async function run(text: string): Promise<string> {
  await replaceEditorText(page, text);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => !document.body.classList.contains('is-running'));
  return (await page.textContent('[data-testid=run-summary]')) ?? '';
}

async function gridCells(): Promise<(string | null)[]> {
  return page.$$eval('.grid-rows [role=gridcell]', (cells) =>
    cells.map((cell) => cell.textContent),
  );
}

/** The calls to sqlgate's API the page made. */
function apiRequests(): SeenRequest[] {
  return seen.filter((request) => request.url.startsWith(`${server.url}/api/`));
}

/** Checks that no request named a target, and that the token stayed in Authorization. */
async function expectTokenOnlyInAuthorization(token: string): Promise<void> {
  const calls = apiRequests();
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    expect(call.authorization).toBe(`Bearer ${token}`);
    const body = JSON.parse(call.body ?? '{}') as Record<string, unknown>;
    expect(body.connection).toBeDefined();
    expect(Object.keys(body).filter((field) => TARGET_FIELDS.includes(field))).toEqual([]);
    expect(call.body).not.toContain(DECOY_PASSWORD);
    expect(call.body).not.toContain(token);
  }
  for (const { url } of seen) expect(url).not.toContain(token);
  expect(page.url()).not.toContain(token);
  const stored = await page.evaluate(() =>
    Object.keys(localStorage).map((key) => `${key}=${localStorage.getItem(key)}`),
  );
  expect(stored.join('\n')).not.toContain(token);
  expect(stored.join('\n')).not.toContain(DECOY_PASSWORD);
}

it(
  'logs in with a key and a connection name, and runs as the connection’s login',
  async () => {
    await logInWithKey(KEY);
    await page.click('#tab-connection');
    await page.click('text=Test connection');
    await page.waitForFunction(() =>
      /Connected|failed/.test(
        document.querySelector('[data-testid=connection-status]')?.textContent ?? '',
      ),
    );
    expect(await page.textContent('[data-testid=connection-status]')).toMatch(
      /^Connected: PostgreSQL/,
    );
    await page.click('text=Save connection');
    await page.click('#tab-query');
    expect(await page.textContent('[data-testid=current-connection]')).toBe('connection app');

    const summary = await run('SELECT current_user AS who');
    expect(summary).toContain('Succeeded');
    expect(await gridCells()).toEqual([database.user]);
    await expectTokenOnlyInAuthorization(KEY);

    // A reload keeps the connection's name and the way in, not the key.
    await page.reload();
    await page.click('#tab-connection');
    expect(await page.inputValue('#field-connection')).toBe('app');
    expect(await page.inputValue('#field-token')).toBe('');
    expect(await page.getAttribute('#tab-login-key', 'aria-selected')).toBe('true');
  },
  TEST_TIMEOUT_MS,
);

it(
  'logs in with a JWT the same way',
  async () => {
    const token = await new SignJWT({ sub: 'console', role: database.user })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(JWT_SECRET));
    await logInWithKey(token);
    expect(await run('SELECT current_user AS who')).toContain('Succeeded');
    expect(await gridCells()).toEqual([database.user]);
    await expectTokenOnlyInAuthorization(token);
  },
  TEST_TIMEOUT_MS,
);

it(
  'shows the message of a wrong key (401), a connection the key may not use (403) and a rate used up (429, with Retry-After)',
  async () => {
    await logInWithKey('wrong-key-0123456789abcdef');
    const unauthorized = await run('SELECT 1');
    expect(unauthorized).toContain('Failed');
    expect(unauthorized).toContain('UNAUTHORIZED: Unknown or invalid credentials');
    expect(unauthorized).not.toContain('wrong-key');

    await logInWithKey(KEY, 'other');
    expect(await run('SELECT 1')).toContain('FORBIDDEN');

    await logInWithKey(LIMITED_KEY);
    expect(await run('SELECT 1')).toContain('Succeeded');
    const limited = await run('SELECT 1');
    expect(limited).toContain('RATE_LIMITED');
    expect(limited).toMatch(/Retry after \d+ s/);

    await page.click('#tab-connection');
    await page.click('text=Test connection');
    await page.waitForFunction(() =>
      /failed/.test(document.querySelector('[data-testid=connection-status]')?.textContent ?? ''),
    );
    expect(await page.textContent('[data-testid=connection-status]')).toMatch(
      /^Connection failed: RATE_LIMITED: .*\(Retry after \d+ s\)$/,
    );
    expect(apiRequests().some((call) => call.body?.includes(DECOY_PASSWORD))).toBe(false);
  },
  TEST_TIMEOUT_MS,
);

it(
  'cancels a run started with a key, with the key',
  async () => {
    await logInWithKey(KEY);
    await page.click('.cm-content');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('SELECT pg_sleep(30)');
    await page.keyboard.press('Control+Enter');
    // Cancel once the statement runs, so that the cancel endpoint has something to cancel.
    await eventually(async () => {
      const running = await sql(
        "SELECT 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'",
      );
      expect(running).toHaveLength(1);
    });
    const cancelAnswer = page.waitForResponse((response) => response.url().endsWith('/cancel'));
    await page.click('text=Cancel');
    expect((await cancelAnswer).status()).toBe(200);
    await page.waitForFunction(() => !document.body.classList.contains('is-running'));
    expect(await page.textContent('[data-testid=run-summary]')).toContain('Cancelled');
    await expectTokenOnlyInAuthorization(KEY);
  },
  TEST_TIMEOUT_MS,
);
