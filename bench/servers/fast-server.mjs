// The "fast peer" for sqlgate's benchmarks: what a Node user who cares about speed would write in an
// afternoon. node:http (no framework), postgres.js (the `postgres` npm package: pipelining, prepared
// statements cached per connection), one pool of 10 per host:port:user:database, one statement per
// request, JSON.stringify of {rows, fields, rowCount, command, executionTime, statement}. It does no
// validation, splitting, hygiene or limits: it is the speed to beat, not a design to copy.
//
//   HOST=127.0.0.1 PORT=3200 node fast-server.mjs   (needs the `postgres` package resolvable)
//
// Copied into the repository for bench/http.mjs, which starts it like the other servers here: it
// listens on HOST (127.0.0.1) and PORT (0: a free port unless set), prints one JSON line {url, pid}
// once listening, and closes the server and its pools on SIGTERM/SIGINT or when stdin closes. The
// request handling is the original's, unchanged (Buffer and performance imported for the lint).
// postgres.js sends `unsafe(sql)` without parameters as an unprepared simple query, so several
// statements in one request reach PostgreSQL as one simple query, their results an array in `rows`.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { exitWhenTold } from '../lib/harness.mjs';

const pools = new Map();
function poolFor({ host, port = 5432, user, password, database }) {
  const key = `${host}:${port}:${user}:${database}`;
  let sql = pools.get(key);
  if (!sql) {
    sql = postgres({
      host,
      port: Number(port),
      user,
      password,
      database,
      max: 10,
      ssl: false,
      types: { bigint: postgres.BigInt },
    });
    pools.set(key, sql);
  }
  return sql;
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/query') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad json"}');
      return;
    }
    const started = performance.now();
    try {
      const result = await poolFor(body).unsafe(body.sql);
      const out = JSON.stringify(
        {
          rows: result,
          fields: result.columns?.map((c) => ({ name: c.name, dataTypeID: c.type })),
          rowCount: result.count,
          command: result.command,
          executionTime: performance.now() - started,
          statement: body.sql,
        },
        (k, v) => (typeof v === 'bigint' ? v.toString() : v),
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(out);
    } catch (err) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: err.message, code: err.code }));
    }
  });
});

const host = process.env.HOST ?? '127.0.0.1';
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(process.env.PORT ?? 0), host, resolve);
});
exitWhenTold(async () => {
  await new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await Promise.allSettled([...pools.values()].map((p) => p.end()));
});
process.stdout.write(
  `${JSON.stringify({ url: `http://${host}:${server.address().port}`, pid: process.pid })}\n`,
);
