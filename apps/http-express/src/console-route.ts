/**
 * Serves the browser console (docs/decisions.md 10.31): the page at the app's root, the files it
 * loads under `console/`. Everything comes from memory, read once from @sqlgate/console's built
 * assets; nothing is fetched from anywhere else, so the console works offline. The page carries a
 * strict Content-Security-Policy, and it talks to the API of the sqlgate that served it.
 */
import { randomBytes } from 'node:crypto';
import {
  CONSOLE_PAGE_CONTENT_TYPE,
  consoleContentSecurityPolicy,
  loadConsoleAssets,
  type ConsoleAsset,
  type ConsoleConnection,
} from '@sqlgate/console';
import { Router, type Request, type Response } from 'express';
import { closeWhenAnsweredEarly, writeAnswerHead } from './answer-headers';
import { writeJson } from './query-endpoint';

const ONE_YEAR_SECONDS = 365 * 24 * 3600;

/** Headers every console response carries: no sniffing, no framing, no referrer sent along. */
function setCommonHeaders(res: Response, asset: ConsoleAsset): void {
  res.setHeader('Content-Type', asset.contentType);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader(
    'Cache-Control',
    asset.immutable ? `public, max-age=${ONE_YEAR_SECONDS}, immutable` : 'no-cache',
  );
  res.setHeader('Vary', 'Accept-Encoding');
}

/** Sends an asset, gzipped when it has a gzipped copy and the client accepts gzip. */
function send(req: Request, res: Response, asset: ConsoleAsset): void {
  setCommonHeaders(res, asset);
  const gzipped = acceptsGzip(req.headers['accept-encoding']) ? asset.gzipped : undefined;
  const body = gzipped ?? asset.body;
  if (gzipped) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', String(body.length));
  writeAnswerHead(res, 200, {});
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * A router answering GET and HEAD of `/` and `/console/<file>`. Mounted at `/db`, a request for
 * `/db` is redirected to `/db/`, where the page's relative links resolve. The page's form opens on
 * `connection`, when given, and its key login offers `connectionNames` (CONFIG_FILE's connections,
 * by name only: docs/access.md).
 */
export function consoleRouter(
  connection?: ConsoleConnection,
  connectionNames: readonly string[] = [],
): Router {
  const assets = loadConsoleAssets();
  const { files } = assets;
  const router = Router({ strict: true });
  router.get('/', (req, res) => {
    // Only a mounted app sees `/` for a path without its final slash; the slash is added to the
    // mount path itself, never to anything the caller wrote.
    if (!pathOf(req.originalUrl).endsWith('/')) {
      closeWhenAnsweredEarly(res);
      res.redirect(301, `${req.baseUrl}/`);
      return;
    }
    // A nonce per response: a page kept from an earlier response cannot lend its nonce to another.
    const nonce = randomBytes(16).toString('base64');
    res.setHeader('Content-Security-Policy', consoleContentSecurityPolicy(nonce));
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    const body = assets.page(nonce, connection, connectionNames);
    send(req, res, { body, contentType: CONSOLE_PAGE_CONTENT_TYPE, immutable: false });
  });
  // Express would answer OPTIONS itself, in plain text; sqlgate answers in JSON, as elsewhere.
  router.options(['/', '/console/:file'], (req, res) => {
    res.setHeader('Allow', 'GET, HEAD');
    writeJson(
      res,
      405,
      JSON.stringify({ error: `Method ${req.method} not allowed on ${req.path}` }),
    );
  });
  router.get('/console/:file', (req, res, next) => {
    const asset = files.get(String(req.params.file));
    if (asset) send(req, res, asset);
    else next();
  });
  return router;
}

/** Whether an Accept-Encoding value accepts gzip: named (any case) or by `*`, with a q above 0. */
export function acceptsGzip(header: string | undefined): boolean {
  let gzip: boolean | undefined;
  let any = false;
  for (const entry of (header ?? '').split(',')) {
    const [name = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (name === 'gzip' || name === 'x-gzip') gzip = accepted;
    else if (name === '*') any = accepted;
  }
  return gzip ?? any;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
