/**
 * What a new user meets first: mounting the app behind `express.json()`, `startServer` options
 * against a stray environment, the query string on the direct path, the command's log lines, and
 * `npx sqlgate` in a fresh checkout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually } from '@sqlgate/testing';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { withDirectQueryPath } from '../src/direct-query-path';
import { createServiceFromConfig, startServer } from '../src/server';
import { createTestApp, target, type TestApp } from './support';

const REPO_ROOT = path.join(__dirname, '..', '..', '..');
const BIN = path.join(__dirname, '..', 'dist', 'bin.js');

let testApp: TestApp;
beforeAll(() => {
  testApp = createTestApp();
});
afterAll(() => testApp.close());

describe('createApp behind a body parser of the host app', () => {
  it.each([
    ['express.json()', express.json()],
    ["express.json({ type: '*/*' })", express.json({ type: '*/*' })],
  ])('answers at once behind %s, and still refuses non-JSON bodies', async (_name, parser) => {
    const host = express();
    host.use(parser);
    host.use('/sqlgate', createApp({ service: testApp.service }));
    const query = await request(host)
      .post('/sqlgate/api/query')
      .send(target({ sql: 'SELECT 1 AS one' }))
      .timeout(5000)
      .expect(200);
    expect(query.body.rows).toEqual([{ one: 1 }]);
    const check = await request(host)
      .post('/sqlgate/api/test-connection')
      .send(target())
      .timeout(5000)
      .expect(200);
    expect(check.body.success).toBe(true);
    await request(host)
      .post('/sqlgate/api/query')
      .set('content-type', 'text/plain')
      .send(JSON.stringify(target({ sql: 'SELECT 1' })))
      .timeout(5000)
      .expect(415);
  });
});

describe("the README's first steps: the demo, then one's own PostgreSQL", () => {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const quickStart = readme.slice(
    readme.indexOf('## Try it'),
    readme.indexOf('## The browser console'),
  );
  /** The bodies its curl lines send, in order. */
  const sent = [...quickStart.matchAll(/ -d '([^']+)'/g)].map(
    (match) => JSON.parse(match[1] ?? '') as Record<string, unknown>,
  );

  it('tries the demo first, with a body that names no target (demo.test.ts runs it)', () => {
    expect(sent[0]).toEqual({ sql: 'SELECT 1' });
    expect(quickStart).toContain('npx sqlgate --demo');
  });

  it('sends a body with a password and sslMode that works against a PostgreSQL with passwords', async () => {
    const body = sent[1] ?? {};
    expect(body).toMatchObject({
      user: 'postgres',
      password: 'secret',
      database: 'postgres',
      sslMode: 'prefer',
      sql: 'SELECT 1 AS one',
    });
    // The test database asks for a password (scram) like a default PostgreSQL over TCP; only
    // where it is and who logs in differ.
    const { host, port, user, password, database } = target();
    const response = await request(testApp.app)
      .post('/api/query')
      .send({ ...body, host, port, user, password, database })
      .expect(200);
    expect(response.body.rows).toEqual([{ one: 1 }]);
    await request(testApp.app)
      .post('/api/query')
      .send({ ...body, host, port, user, database, password: undefined })
      .expect(400);
  });
});

describe('startServer options win over the environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ['PORT', 'LOG_LEVEL', 'POOL_MAX']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('ignores a bad PORT (and LOG_LEVEL) in the environment when the options give them', async () => {
    process.env.PORT = 'abc';
    process.env.LOG_LEVEL = 'loud';
    const server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('still refuses a bad variable that no option replaces', async () => {
    process.env.POOL_MAX = '0';
    await expect(
      startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' }),
    ).rejects.toThrow(/^POOL_MAX must be an integer/);
  });
});

describe('the direct query path and the query string', () => {
  it('answers POST /api/query?x=1 itself, as it answers /api/query', async () => {
    const service = createServiceFromConfig(loadConfig({}));
    const appCalls: string[] = [];
    const app: RequestListener = (req, res) => {
      appCalls.push(`${req.method} ${req.url}`);
      res.writeHead(418).end();
    };
    const server = createServer(
      withDirectQueryPath(app, {
        service,
        logger: pino({ level: 'silent' }),
        bodyLimits: { maxBytes: 1 << 20, timeoutMs: 10_000 },
        answerStallTimeoutMs: 60_000,
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      for (const pathAndQuery of ['/api/query', '/api/query?x=1', '/api/query?']) {
        const response = await fetch(`http://127.0.0.1:${port}${pathAndQuery}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(target({ sql: 'SELECT 1 AS one' })),
        });
        expect({ pathAndQuery, status: response.status }).toEqual({ pathAndQuery, status: 200 });
        expect(((await response.json()) as { rows: unknown[] }).rows).toEqual([{ one: 1 }]);
      }
      expect(appCalls).toEqual([]);
      // Everything else still goes to the app.
      await fetch(`http://127.0.0.1:${port}/api/query?x=1`);
      expect(appCalls).toEqual(['GET /api/query?x=1']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
    }
  });
});

/** Collects a child's stdout; resolves `listening` with the url of its listening line. */
function watch(child: ChildProcess): {
  output: () => string;
  listening: Promise<string>;
  exited: Promise<number | null>;
} {
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += String(chunk);
      const line = output.split('\n').find((each) => each.includes('sqlgate listening'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then((code) =>
      reject(new Error(`exited with ${code} before listening: ${output}`)),
    );
  });
  listening.catch(() => undefined); // not every caller waits for it
  return { output: () => output, listening, exited };
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('the sqlgate command’s start and stop lines', () => {
  it('are pino lines', async () => {
    const child = spawn(process.execPath, [BIN], {
      env: { ...process.env, PORT: '0', HOSTNAME: '127.0.0.1', LOG_LEVEL: 'info' },
    });
    const { output, listening, exited } = watch(child);
    const url = await listening;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // The request line is written when the response has finished on the server's side, which
    // may be a moment after the client has read it: wait for it so the stop line comes last.
    await eventually(() => output().includes('"msg":"request"'));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const line of lines) {
      expect(line).toMatchObject({
        level: expect.any(Number) as number,
        time: expect.any(Number) as number,
        pid: child.pid,
      });
    }
    expect(lines[0]).toMatchObject({ level: 30, msg: 'sqlgate listening', url });
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'shutting down', signal: 'SIGTERM' });
  }, 20_000);

  it('are not printed with LOG_LEVEL=silent', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN], {
      env: { ...process.env, PORT: String(port), HOSTNAME: '127.0.0.1', LOG_LEVEL: 'silent' },
    });
    const { output, exited } = watch(child);
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, {
      withinMs: 30_000,
      everyMs: 100,
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toBe('');
  }, 20_000);
});

describe('npx sqlgate in the repository', () => {
  it('runs the workspace’s command after npm ci', async () => {
    // Its own process group, so that stopping it reaches the server under npx's shell.
    const child = spawn('npx', ['--no-install', 'sqlgate'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: '0', HOSTNAME: '127.0.0.1', LOG_LEVEL: 'info' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => (errors += String(chunk)));
    const { listening, exited } = watch(child);
    try {
      const url = await listening.catch((error: Error) => {
        throw new Error(`${error.message}\n${errors}`);
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  }, 60_000);
});
