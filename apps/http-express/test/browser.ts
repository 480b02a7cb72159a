/**
 * Debian's Chromium driven by playwright-core, for the console's end-to-end tests: headless, with
 * a fresh profile, and with the flags that keep it off the network (it would otherwise try to
 * reach update and sync services from a machine that has no route to them).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const OFFLINE_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  downloads: string;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium); .ci/run does`,
    );
  }
  const profile = mkdtempSync(path.join(tmpdir(), 'sqlgate-chromium-'));
  const downloads = mkdtempSync(path.join(tmpdir(), 'sqlgate-downloads-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: OFFLINE_FLAGS,
    acceptDownloads: true,
    downloadsPath: downloads,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    downloads,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      rmSync(downloads, { recursive: true, force: true });
    },
  };
}

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
