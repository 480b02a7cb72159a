/**
 * A real browser for tests: Debian's Chromium driven by playwright-core (an optional peer
 * dependency, loaded only here), headless, with a fresh profile and the flags that keep it off the
 * network. Without those flags Chromium reaches for update, sync and component services, which a
 * machine without a route to them refuses many times a second.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';

/** Where Debian's chromium package puts the browser; CHROMIUM_PATH names another. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_OFFLINE_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface StartChromiumOptions {
  /** The browser binary. Default: CHROMIUM_PATH, else /usr/bin/chromium. */
  executablePath?: string;
  /** Default 1280 × 800. */
  viewport?: { width: number; height: number };
}

export interface RunningChromium {
  /** A persistent context over the fresh profile: open pages with `context.newPage()`. */
  context: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

/**
 * playwright-core, loaded when a browser is started: it is an optional peer dependency, and a
 * consumer without it gets a sentence saying what to install instead of a bare module error.
 */
function loadPlaywright(): typeof import('playwright-core') {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('playwright-core') as typeof import('playwright-core');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      'startChromium needs playwright-core, an optional peer dependency of @sqlgate/testing: npm install --save-dev playwright-core',
      { cause: error },
    );
  }
}

export async function startChromium(options: StartChromiumOptions = {}): Promise<RunningChromium> {
  const executablePath =
    options.executablePath ?? process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
  if (!existsSync(executablePath)) {
    throw new Error(
      `${executablePath} is missing: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  const { chromium } = loadPlaywright();
  const profile = mkdtempSync(path.join(tmpdir(), 'sqlgate-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [...CHROMIUM_OFFLINE_FLAGS],
      acceptDownloads: true,
      viewport: options.viewport ?? { width: 1280, height: 800 },
    });
    return {
      context,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
