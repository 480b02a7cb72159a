// A bare node:http server that answers every request with the same bytes: sqlgate's own answer to
// a cached SELECT 1, captured by bench/http.mjs and given in CANNED_ANSWER ({statusCode, headers
// as a flat [name, value, …] list without the Date, Connection and Keep-Alive headers node:http
// adds itself, body in base64}; bench/lib/canned-answer.mjs). What serving those bytes over
// node:http costs with nothing computed: the floor under a cached read. Prints {url, pid} once
// listening, like the other servers here.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { exitWhenTold } from '../lib/harness.mjs';

const { statusCode, headers, body } = JSON.parse(process.env.CANNED_ANSWER);
const bodyBytes = Buffer.from(body, 'base64');

const server = http.createServer((req, res) => {
  // The request is read to its end before the answer, as any server must on a kept-alive
  // connection (sqlgate parses it; this one only drains it).
  req.resume();
  req.on('end', () => res.writeHead(statusCode, headers).end(bodyBytes));
});

await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', resolve);
});
exitWhenTold(async () => {
  await new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
});
process.stdout.write(
  `${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, pid: process.pid })}\n`,
);
