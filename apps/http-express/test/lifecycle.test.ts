/**
 * Running sqlgate: the bin's configuration errors, graceful shutdown on SIGTERM / SIGINT, and
 * embedding (startServer / close leave nothing open; an app mounts under any path).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from '@sqlgate/testing';
import express from 'express';
import request from 'supertest';
import { createApp } from '../src/app';
import { startServer } from '../src/server';
import { createTestApp, sql, target } from './support';

const dist = path.join(__dirname, '..', 'dist');
const bin = path.join(dist, 'bin.js');
const database = `lifecycle_${process.pid}`;

beforeAll(() =>
  sql(`DROP DATABASE IF EXISTS ${database}`).then(() => sql(`CREATE DATABASE ${database}`)),
);
afterAll(() => sql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));

function startBin(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin], {
    env: { ...process.env, PORT: '0', HOSTNAME: '127.0.0.1', ...env },
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += String(chunk);
      const line = output.split('\n').find((each) => each.includes('listening'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) =>
      reject(new Error(`sqlgate exited with ${code} before listening: ${output}`)),
    );
  });
}

const exitOf = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => child.once('exit', (code) => resolve(code)));

const backendsOf = async (): Promise<number> =>
  Number(
    (await sql('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [database]))[0]
      ?.n,
  );

describe('the sqlgate bin', () => {
  it.each([
    ['PORT', 'abc'],
    ['POOL_MAX', '0'],
  ])('refuses %s=%s with one line naming the variable and exits non-zero', (name, value) => {
    const result = spawnSync(process.execPath, [bin], {
      env: { ...process.env, [name]: value },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.status).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    expect(lines[0]).toMatch(/must be an integer/);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s finishes the request in flight, refuses new ones, ends every pool and exits 0',
    async (signal) => {
      const { child, url } = await startBin({ LOG_LEVEL: 'info' });
      const exited = exitOf(child);
      const body = { ...target({ database }), sql: "SELECT pg_sleep(2), 1 AS done, 'in-flight'" };
      const inFlight = fetch(`${url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      // In flight: running in PostgreSQL when the signal comes.
      await eventually(async () => {
        const [running] = await sql(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep' AND query LIKE '%in-flight%'",
          [database],
        );
        return running?.n === 1;
      });
      child.kill(signal);
      await eventually(() => expect(fetch(`${url}/healthz`)).rejects.toThrow());
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { rows: unknown[] }).rows).toEqual([
        { pg_sleep: '', done: 1, '?column?': 'in-flight' },
      ]);
      expect(await exited).toBe(0);
      expect(await backendsOf()).toBe(0);
    },
    60_000,
  );
});

describe('embedding', () => {
  it('startServer({ port: 0 }) then close() leaves no handle open: the process exits by itself', () => {
    const script = `
      const { startServer } = require(${JSON.stringify(dist)});
      (async () => {
        const server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
        const response = await fetch(server.url + '/api/query', {
          method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' },
          body: process.env.QUERY_BODY,
        });
        const body = await response.json();
        if (JSON.stringify(body.rows) !== '[{"one":1}]') throw new Error('unexpected ' + JSON.stringify(body));
        await server.close();
        process.stdout.write('closed\\n');
      })().catch((error) => { console.error(error); process.exitCode = 1; });
    `;
    const result = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, QUERY_BODY: JSON.stringify(target({ sql: 'SELECT 1 AS one' })) },
      encoding: 'utf8',
      timeout: 15_000,
    });
    // A timer or socket left behind would keep the child alive until the timeout kills it.
    expect(result.signal).toBeNull();
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('closed\n');
    expect(result.status).toBe(0);
  });

  it('supports await using, closing the server at the end of the block', async () => {
    let url = '';
    {
      await using server = await startServer({
        port: 0,
        hostname: '127.0.0.1',
        logLevel: 'silent',
      });
      url = server.url;
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    }
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('mounts under any path of an existing Express app', async () => {
    const testApp = createTestApp();
    try {
      const host = express();
      host.get('/', (_req, res) => {
        res.send('host app');
      });
      host.use('/tools/sqlgate', createApp({ service: testApp.service }));
      const response = await request(host)
        .post('/tools/sqlgate/api/query')
        .send(target({ sql: 'SELECT 1 AS one' }))
        .expect(200);
      expect(response.body.rows).toEqual([{ one: 1 }]);
      await request(host).get('/tools/sqlgate/healthz').expect(200, { status: 'ok' });
      await request(host).get('/').expect(200, 'host app');
    } finally {
      await testApp.close();
    }
  });
});
