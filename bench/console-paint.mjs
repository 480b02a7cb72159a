// How heavy the browser console is to open: the size of its script as served (gzip -9, as the build
// writes it) and its time to first paint, `first-contentful-paint` of performance.getEntriesByType
// ('paint') in Debian's Chromium against a local sqlgate (the built server, in this process; the
// page needs no database to paint). Each load is cold (the browser's cache off, so the script is
// fetched and compiled every time) and the median of LOADS is reported. Run after npm run build:
// node bench/console-paint.mjs (LOADS=15 for more loads).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '@sqlgate/http-express';
import { startChromium } from '@sqlgate/testing/chromium';

const LOADS = Number(process.env.LOADS ?? 9);
const assets = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'packages',
  'console',
  'dist',
  'assets',
);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The built script's size, plain and as the gzip copy the server sends. */
function scriptSizes() {
  // The one the page names: a directory built more than once keeps earlier scripts beside it.
  const page = fs.readFileSync(path.join(assets, 'index.html'), 'utf8');
  const script = /console-[A-Za-z0-9]+\.js/.exec(page)?.[0];
  if (!script) throw new Error(`No console script in ${assets}: run npm run build first`);
  return {
    name: script,
    bytes: fs.statSync(path.join(assets, script)).size,
    gzipBytes: fs.statSync(path.join(assets, `${script}.gz`)).size,
  };
}

/** One cold load: milliseconds from navigation start to the first contentful paint. */
async function firstPaint(browser, url) {
  const page = await browser.context.newPage();
  try {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await page.goto(url, { waitUntil: 'load' });
    return await page.evaluate(
      () =>
        new Promise((resolve) => {
          new PerformanceObserver((list) => {
            const entry = list.getEntriesByName('first-contentful-paint')[0];
            if (entry) resolve(entry.startTime);
          }).observe({ type: 'paint', buffered: true });
        }),
    );
  } finally {
    await page.close();
  }
}

const server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
const browser = await startChromium();
try {
  // One load first, not counted: Chromium's own start-up is not the page's.
  await firstPaint(browser, `${server.url}/`);
  const paints = [];
  for (let load = 0; load < LOADS; load++) paints.push(await firstPaint(browser, `${server.url}/`));
  const sizes = scriptSizes();
  console.log(`script ${sizes.name}: ${sizes.bytes} bytes, ${sizes.gzipBytes} bytes gzip -9`);
  console.log(
    `first-contentful-paint, cold, median of ${LOADS}: ${median(paints).toFixed(0)} ms ` +
      `(min ${Math.min(...paints).toFixed(0)}, max ${Math.max(...paints).toFixed(0)})`,
  );
} finally {
  await browser.close();
  await server.close();
}
