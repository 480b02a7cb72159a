/**
 * GET /metrics against a real server and PostgreSQL (docs/decisions.md 10.25): after a mixed
 * workload every sqlgate counter equals what was sent, the exposition passes
 * `promtool check metrics`, no label carries a password or a literal, pool series leave with
 * their pool, and the endpoint keeps the rules of the statistics endpoints (token, browsers).
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { startServer, type RunningServer } from '../src/server';
import { rawExchange } from './raw-http';
import { database, target } from './support';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (labels without escapes: ours have none). */
function samplesOf(exposition: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of exposition.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of one series; 0 when absent (a counter that never moved has no labelled series). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found.reduce((sum, sample) => sum + sample.value, 0);
}

async function post(server: RunningServer, body: unknown, accept = 'application/json') {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

async function scrape(server: RunningServer, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}/metrics`, { headers });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

describe('GET /metrics', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
  });
  afterAll(() => server.close());

  it('counts a mixed workload exactly, and the exposition passes promtool', async () => {
    const literal = 'literal-marker-7f3a';
    const statuses: Record<string, number[]> = {};
    const record = (route: string, status: number) => (statuses[route] ??= []).push(status);
    for (let i = 0; i < 3; i++)
      record('/api/query', await post(server, { ...target(), sql: 'SELECT 1' }));
    record('/api/query', await post(server, { ...target(), sql: 'SELECT 1; SELECT 2; SELECT 3' }));
    record(
      '/api/query',
      await post(server, { ...target(), sql: `SELECT '${literal}' FROM no_such_table` }),
    );
    record(
      '/api/query',
      await post(server, {
        ...target(),
        sql: 'CREATE TEMP TABLE metrics_t (a int); INSERT INTO metrics_t VALUES (1), (2)',
        cache: { ttlMs: 60_000 },
      }),
    );
    const cached = { ...target(), sql: 'SELECT 42 AS answer', cache: { ttlMs: 60_000 } };
    record('/api/query', await post(server, cached));
    record('/api/query', await post(server, cached));
    const hundredRows = {
      ...target(),
      sql: 'SELECT g FROM generate_series(1, 100) g',
      cache: { ttlMs: 60_000 },
    };
    record('/api/query', await post(server, hundredRows, 'application/x-ndjson'));
    const fiftyRows = { ...target(), sql: 'SELECT g FROM generate_series(1, 50) g' };
    record('/api/query', await post(server, fiftyRows, 'text/csv'));
    record('/api/query', await post(server, '{"sql": '));
    record('/api/stats/pools', (await fetch(`${server.url}/api/stats/pools`)).status);
    record('unmatched', (await fetch(`${server.url}/no/such/path`)).status);

    const { status, type, text } = await scrape(server);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = samplesOf(text);

    // HTTP requests by route, method and status: one series per status seen.
    for (const [route, seen] of Object.entries(statuses)) {
      const method = route === '/api/query' ? 'POST' : 'GET';
      for (const each of new Set(seen)) {
        const expected = seen.filter((status) => status === each).length;
        const labels = { route, method, status: String(each) };
        expect(valueOf(samples, 'sqlgate_http_requests_total', labels)).toBe(expected);
        expect(valueOf(samples, 'sqlgate_http_request_duration_seconds_count', labels)).toBe(
          expected,
        );
      }
    }
    expect(statuses['/api/query']?.filter((each) => each === 200)).toHaveLength(9);

    // Statements by strategy, command and outcome.
    const statements = (labels: Record<string, string>) =>
      valueOf(samples, 'sqlgate_statements_total', labels);
    expect(statements({ strategy: 'single', command: 'SELECT', outcome: 'ok' })).toBe(3 + 1 + 2);
    expect(statements({ strategy: 'parallel-reads', command: 'SELECT', outcome: 'ok' })).toBe(3);
    expect(statements({ strategy: 'single', command: 'SELECT', outcome: 'error' })).toBe(1);
    expect(statements({ strategy: 'transaction', command: 'CREATE', outcome: 'ok' })).toBe(1);
    expect(statements({ strategy: 'transaction', command: 'INSERT', outcome: 'ok' })).toBe(1);
    expect(statements({ outcome: 'cached' })).toBe(1);
    expect(statements({})).toBe(13);
    // Those that ran in PostgreSQL have a duration: every statement but the cached one.
    expect(valueOf(samples, 'sqlgate_statement_duration_seconds_count')).toBe(12);

    expect(valueOf(samples, 'sqlgate_database_errors_total', { sqlstate_class: '42' })).toBe(1);
    expect(valueOf(samples, 'sqlgate_database_errors_total')).toBe(1);
    expect(valueOf(samples, 'sqlgate_connection_errors_total')).toBe(0);
    // The cached read: one miss, then one hit; every other statement bypassed the cache.
    expect(valueOf(samples, 'sqlgate_cache_hits_total')).toBe(1);
    expect(valueOf(samples, 'sqlgate_cache_misses_total')).toBe(1);
    const bypasses = (reason: string) =>
      valueOf(samples, 'sqlgate_cache_bypasses_total', { reason });
    expect(bypasses('disabled')).toBe(3 + 3 + 1 + 1);
    expect(bypasses('write')).toBe(2);
    expect(bypasses('stream')).toBe(1);
    expect(valueOf(samples, 'sqlgate_cache_bypasses_total')).toBe(11);
    expect(valueOf(samples, 'sqlgate_cache_entries')).toBe(1);
    expect(valueOf(samples, 'sqlgate_cache_bytes')).toBeGreaterThan(0);
    expect(valueOf(samples, 'sqlgate_streamed_rows_total', { format: 'ndjson' })).toBe(100);
    expect(valueOf(samples, 'sqlgate_streamed_rows_total', { format: 'csv' })).toBe(50);
    expect(valueOf(samples, 'sqlgate_streamed_bytes_total', { format: 'csv' })).toBe(
      Buffer.byteLength(`g\r\n${Array.from({ length: 50 }, (_, i) => `${i + 1}\r\n`).join('')}`),
    );
    // Every statement that needed a connection waited for one (the cached read did not).
    expect(valueOf(samples, 'sqlgate_pool_wait_duration_seconds_count')).toBeGreaterThanOrEqual(8);
    const poolId = `${database.host}:${database.port}:${database.user}:${database.database}`;
    expect(
      valueOf(samples, 'sqlgate_pool_connections', { pool: poolId, state: 'total' }),
    ).toBeGreaterThan(0);
    expect(valueOf(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);

    // The same figures as the SPEC's statistics endpoint.
    const { stats } = (await (await fetch(`${server.url}/api/stats/cache`)).json()) as {
      stats: { totalQueries: number; cacheHits: number };
    };
    expect(stats.totalQueries).toBe(13);
    expect(stats.cacheHits).toBe(1);

    // Nothing a caller sent leaves through a label.
    expect(text).not.toContain(literal);
    expect(text).not.toContain('no_such_table');
    if (database.password) expect(text).not.toContain(database.password);

    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (promtool.error) {
      throw new Error(`promtool is needed (Debian package prometheus): ${promtool.error.message}`);
    }
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect(promtool.status).toBe(0);
  });

  it('keeps labels bounded whatever a caller sends: long pool ids, odd paths and methods', async () => {
    // The login fails, but the pool it was tried for is listed until it is closed.
    const longUser = `u${'x'.repeat(5000)}`;
    expect(
      await post(server, { ...target({ user: longUser }), sql: 'SELECT 1' }),
    ).toBeGreaterThanOrEqual(400);
    // Express matches routes without regard to case or a trailing slash: so do the labels.
    expect((await fetch(`${server.url}/API/Stats/Pools/`)).status).toBe(200);
    await fetch(`${server.url}/healthz`, { method: 'PROPFIND' });
    const { text } = await scrape(server);
    const samples = samplesOf(text);
    const longest = Math.max(...text.split('\n').map((line) => line.length));
    expect(longest).toBeLessThan(600);
    const pools = samples
      .filter((sample) => sample.name === 'sqlgate_pool_connections')
      .map((sample) => sample.labels.pool as string);
    expect(pools.some((pool) => pool.includes('…#') && pool.length <= 200)).toBe(true);
    expect(
      valueOf(samples, 'sqlgate_http_requests_total', { route: '/api/stats/pools', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      valueOf(samples, 'sqlgate_http_requests_total', { route: '/healthz', method: 'OTHER' }),
    ).toBe(1);
  });

  it('counts requests for targets no route can match (`OPTIONS *`, `GET *`) as unmatched', async () => {
    const count = async (method: string, status: string) =>
      valueOf(samplesOf((await scrape(server)).text), 'sqlgate_http_requests_total', {
        route: 'unmatched',
        method,
        status,
      });
    const before = { options: await count('OPTIONS', '204'), get: await count('GET', '400') };
    const asterisk = (method: string) =>
      rawExchange(
        server.port,
        `${method} * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
    expect(await asterisk('OPTIONS')).toMatch(/^HTTP\/1\.1 204 /);
    expect(await asterisk('GET')).toMatch(/^HTTP\/1\.1 400 /);
    expect(await count('OPTIONS', '204')).toBe(before.options + 1);
    expect(await count('GET', '400')).toBe(before.get + 1);
  });

  it('counts a CSV answer that sqlgate cut after a failure with the status it sent, not 499', async () => {
    const before = valueOf(samplesOf((await scrape(server)).text), 'sqlgate_http_requests_total', {
      route: '/api/query',
      status: '499',
    });
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/csv' },
      body: JSON.stringify({
        ...target(),
        sql: 'SELECT 1 / (g - 3000) FROM generate_series(1, 5000) g',
      }),
    });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const samples = samplesOf((await scrape(server)).text);
    expect(
      valueOf(samples, 'sqlgate_http_requests_total', { route: '/api/query', status: '499' }),
    ).toBe(before);
    expect(valueOf(samples, 'sqlgate_database_errors_total', { sqlstate_class: '22' })).toBe(1);
  });

  it('sends what it wrote before a cut: a CSV that fails on its third row still arrives as a cut 200', async () => {
    const body = JSON.stringify({
      ...target(),
      sql: 'SELECT 1 / (g - 3) AS q FROM generate_series(1, 5) g',
    });
    const received = await new Promise<{ status?: number; text: string; complete: boolean }>(
      (resolve) => {
        const request = http.request(
          `${server.url}/api/query`,
          { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/csv' } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('close', () =>
              resolve({ status: response.statusCode, text, complete: response.complete }),
            );
          },
        );
        request.on('error', () => resolve({ text: '', complete: false }));
        request.end(body);
      },
    );
    expect(received.status).toBe(200);
    expect(received.text).toBe('q\r\n0\r\n-1\r\n');
    expect(received.complete).toBe(false);
  });

  it('counts the SQLSTATE of a COMMIT that fails, which no statement carries', async () => {
    const classOf = async () =>
      valueOf(samplesOf((await scrape(server)).text), 'sqlgate_database_errors_total', {
        sqlstate_class: '23',
      });
    const before = await classOf();
    const status = await post(server, {
      ...target(),
      sql:
        'CREATE TEMP TABLE commit_p (id int PRIMARY KEY); ' +
        'CREATE TEMP TABLE commit_c (pid int REFERENCES commit_p DEFERRABLE INITIALLY DEFERRED); ' +
        'INSERT INTO commit_c VALUES (1)',
    });
    expect(status).toBeGreaterThanOrEqual(400);
    expect(await classOf()).toBe(before + 1);
  });

  it('refuses a page of another origin, as every endpoint does', async () => {
    const response = await fetch(`${server.url}/metrics`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(response.status).toBe(403);
  });
});

describe('GET /metrics settings', () => {
  it('asks for METRICS_TOKEN when it is set', async () => {
    await using server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      metricsToken: 'metrics-secret',
    });
    expect((await scrape(server)).status).toBe(401);
    expect((await scrape(server, { authorization: 'Bearer wrong' })).status).toBe(401);
    const allowed = await scrape(server, { authorization: 'Bearer metrics-secret' });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('sqlgate_http_requests_total');
    // The statistics endpoints keep their own token (none here).
    expect((await fetch(`${server.url}/api/stats/pools`)).status).toBe(200);
  });

  it('answers 404 with METRICS=off, token or not, and the queries still run', async () => {
    await using server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      metrics: false,
      metricsToken: 'unused',
    });
    expect(await post(server, { ...target(), sql: 'SELECT 1' })).toBe(200);
    const off = await scrape(server);
    expect(off.status).toBe(404);
    expect(JSON.parse(off.text)).toEqual({ error: 'Not found: GET /metrics' });
  });

  it('drops the series of a pool once the pool is closed', async () => {
    await using server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      poolTargetsMax: 1,
    });
    expect(await post(server, { ...target(), sql: 'SELECT 1' })).toBe(200);
    const first = `${database.host}:${database.port}:${database.user}:${database.database}`;
    expect(
      valueOf(samplesOf((await scrape(server)).text), 'sqlgate_pool_connections', { pool: first }),
    ).toBeGreaterThan(0);
    // A second target takes the only pool place: the first pool is closed.
    expect(await post(server, { ...target({ database: 'postgres' }), sql: 'SELECT 1' })).toBe(200);
    const samples = samplesOf((await scrape(server)).text);
    const pools = new Set(
      samples
        .filter((sample) => sample.name === 'sqlgate_pool_connections')
        .map((s) => s.labels.pool),
    );
    expect([...pools]).toEqual([`${database.host}:${database.port}:${database.user}:postgres`]);
  });
});
