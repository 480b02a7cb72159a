/** What a test of a page in a real browser checks besides its own assertions. */
import type { Page } from 'playwright-core';

/**
 * What went wrong in a page that no assertion asked about: uncaught errors, and content the
 * Content-Security-Policy blocked (Chromium reports each in the console).
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
      problems.push(`CSP: ${message.text()}`);
    }
  });
  return problems;
}

/** Replaces the console editor's text; the cursor ends after it. */
export async function replaceEditorText(page: Page, text: string): Promise<void> {
  await page.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** Fills the console's connection form with `target`'s settings and comes back to the query. */
export async function fillConnectionForm(
  page: Page,
  target: { host: string; port: number; user: string; password?: string; database: string },
): Promise<void> {
  await page.click('#tab-connection');
  await page.fill('#field-host', target.host);
  await page.fill('#field-port', String(target.port));
  await page.fill('#field-user', target.user);
  await page.fill('#field-password', target.password ?? '');
  await page.fill('#field-database', target.database);
  await page.click('#tab-query');
}
