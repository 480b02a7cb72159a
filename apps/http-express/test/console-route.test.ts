/**
 * How the console is served (docs/decisions.md 10.31): the page and its files, their headers and
 * policy, where the routes exist (standalone server, CONSOLE=off, createApp, a mount path), and
 * what they refuse.
 */
import express from 'express';
import request from 'supertest';
import { createApp } from '../src/app';
import { acceptsGzip } from '../src/console-route';
import { startServer } from '../src/server';
import { createTestApp, type TestApp } from './support';

let plain: TestApp;

beforeAll(() => {
  plain = createTestApp();
});
afterAll(() => plain.close());

function consoleApp(): ReturnType<typeof createApp> {
  return createApp({ service: plain.service, console: true });
}

/** The script and stylesheet the page names, and the nonce on its stylesheet link. */
function linksOf(page: string): { script: string; style: string; nonce: string } {
  const script = /<script type="module" src="([^"]+)"/.exec(page)?.[1];
  const style = /<link rel="stylesheet" href="([^"]+)" nonce="([^"]+)"/.exec(page);
  if (!script || !style?.[1] || !style[2]) throw new Error(`unexpected page: ${page}`);
  return { script, style: style[1], nonce: style[2] };
}

it('is not served by an app that did not ask for it', async () => {
  const response = await request(plain.app).get('/');
  expect(response.status).toBe(404);
  expect(response.body).toEqual({ error: 'Not found: GET /' });
});

it('serves the page with a strict policy whose style nonce is new for each response', async () => {
  const app = consoleApp();
  const first = await request(app).get('/');
  expect(first.status).toBe(200);
  expect(first.headers['content-type']).toBe('text/html; charset=utf-8');
  const policy = first.headers['content-security-policy'] as string;
  const { nonce } = linksOf(first.text);
  expect(policy).toBe(
    `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  expect(first.headers).toMatchObject({
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  });
  expect(first.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
  const second = await request(app).get('/');
  expect(linksOf(second.text).nonce).not.toBe(nonce);
});

it('serves the files the page names, cached for a year and gzipped on request, HEAD without a body', async () => {
  const app = consoleApp();
  const { script, style } = linksOf((await request(app).get('/')).text);
  const js = await request(app).get(`/${script}`).set('accept-encoding', 'identity');
  expect(js.status).toBe(200);
  expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
  expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(js.headers['content-encoding']).toBeUndefined();
  const gzipped = await request(app)
    .get(`/${script}`)
    .set('accept-encoding', 'gzip')
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(gzipped.headers['content-encoding']).toBe('gzip');
  expect(Number(gzipped.headers['content-length'])).toBeLessThan(js.text.length / 2);
  // supertest has gunzipped the body: it is the script itself.
  expect((gzipped.body as Buffer).toString()).toBe(js.text);
  const css = await request(app).get(`/${style}`);
  expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  const head = await request(app).head(`/${script}`);
  expect(head.status).toBe(200);
  expect(head.text).toBeUndefined();
  expect((await request(app).get('/console/icon.svg')).headers['content-type']).toBe(
    'image/svg+xml',
  );
});

it('answers JSON for a file it does not have, a path out of its folder and another method', async () => {
  const app = consoleApp();
  for (const path of [
    '/console/missing.js',
    '/console/..%2Fpackage.json',
    '/console/',
    '/index.html',
  ]) {
    const response = await request(app).get(path);
    expect({ path, status: response.status, json: response.type }).toEqual({
      path,
      status: 404,
      json: 'application/json',
    });
  }
  const post = await request(app).post('/').set('content-type', 'application/json').send('{}');
  expect(post.status).toBe(404);
  expect(post.body).toEqual({ error: 'Not found: POST /' });
});

it('refuses a foreign Host, as the API does (DNS rebinding)', async () => {
  const response = await request(consoleApp()).get('/').set('host', 'attacker.example');
  expect(response.status).toBe(403);
  expect(response.type).toBe('application/json');
});

it('serves under a mount path, redirecting the path without its slash', async () => {
  const host = express();
  host.use('/db', consoleApp());
  const bare = await request(host).get('/db');
  expect(bare.status).toBe(301);
  expect(bare.headers.location).toBe('/db/');
  const page = await request(host).get('/db/');
  expect(page.status).toBe(200);
  const { script } = linksOf(page.text);
  expect((await request(host).get(`/db/${script}`)).status).toBe(200);
  // The redirect names the mount path, never what the caller wrote.
  expect((await request(host).get('/db?next=//evil.example')).headers.location).toBe('/db/');
});

it('is on in the standalone server unless CONSOLE=off', async () => {
  const on = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
  const off = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    console: false,
  });
  try {
    expect((await fetch(`${on.url}/`)).status).toBe(200);
    const refused = await fetch(`${off.url}/`);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: 'Not found: GET /' });
  } finally {
    await Promise.all([on.close(), off.close()]);
  }
});

it('reads Accept-Encoding as HTTP does: any case, q=0 refuses, * accepts', () => {
  expect(acceptsGzip('gzip')).toBe(true);
  expect(acceptsGzip('GZIP')).toBe(true);
  expect(acceptsGzip('br, gzip;q=0.5')).toBe(true);
  expect(acceptsGzip('gzip;q=0')).toBe(false);
  expect(acceptsGzip('br, gzip;q=0, *')).toBe(false);
  expect(acceptsGzip('*')).toBe(true);
  expect(acceptsGzip('*;q=0')).toBe(false);
  expect(acceptsGzip('identity')).toBe(false);
  expect(acceptsGzip(undefined)).toBe(false);
});

it('answers OPTIONS and a refused gzip in JSON and plain bytes', async () => {
  const app = consoleApp();
  for (const path of ['/', '/console/icon.svg']) {
    const options = await request(app).options(path);
    expect({
      path,
      status: options.status,
      type: options.type,
      allow: options.headers.allow,
    }).toEqual({
      path,
      status: 405,
      type: 'application/json',
      allow: 'GET, HEAD',
    });
  }
  const refused = await request(app).get('/console/icon.svg').set('accept-encoding', 'gzip;q=0');
  expect(refused.headers['content-encoding']).toBeUndefined();
});
