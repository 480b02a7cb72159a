// The baseline of bench/http.mjs: the least an Express 5 + pg service does for the same request.
// One pg.Pool (max 10) per host:port:user:database, express.json(), POST /api/query →
// pool.query(sql) → {rows, fields, rowCount, command}. No parsing, no strategies, no cache, no
// session clean-up, no TLS. Several statements go to PostgreSQL as one simple query. Prints {url}.
import { createRequire } from 'node:module';
import { exitWhenTold } from '../lib/harness.mjs';

const require = createRequire(import.meta.url);
const express = require('express');
const pg = require('pg');

const pools = new Map();

function poolFor(body) {
  const key = `${body.host}:${body.port}:${body.user}:${body.database}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new pg.Pool({
      host: body.host,
      port: Number(body.port),
      user: body.user,
      password: body.password,
      database: body.database,
      ssl: false,
      max: 10,
    });
    pool.on('error', () => undefined);
    pools.set(key, pool);
  }
  return pool;
}

const shape = ({ rows, fields, rowCount, command }) => ({ rows, fields, rowCount, command });

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/api/query', async (req, res) => {
  try {
    const result = await poolFor(req.body).query(req.body.sql);
    res.json(
      Array.isArray(result) ? { multipleResults: true, results: result.map(shape) } : shape(result),
    );
  } catch (error) {
    res.status(400).json({ error: { message: error.message, code: error.code } });
  }
});

const server = await new Promise((resolve, reject) => {
  const listening = app.listen(0, '127.0.0.1', (error) =>
    error ? reject(error) : resolve(listening),
  );
});
exitWhenTold(async () => {
  await new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await Promise.all([...pools.values()].map((pool) => pool.end()));
});
process.stdout.write(
  `${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, pid: process.pid })}\n`,
);
