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
