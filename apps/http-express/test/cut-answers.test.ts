/**
 * Requests sqlgate cuts short itself are logged so, not as clients that went away (499), and get
 * the same answer with one process or several (docs/decisions.md 9, 10.22, 10.35): a stream whose
 * client stopped reading, and requests still running when a shutdown's grace period ends.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { eventually } from '@sqlgate/testing';
import { startServer } from '../src/server';
import { startSqlgateProcess } from './sqlgate-process';
import { captureLogs, sql, target } from './support';

async function statementRuns(marker: string): Promise<boolean> {
  const rows = await sql(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
    [`%AS ${marker}%`],
  );
  return Number(rows[0]?.n) === 1;
}

describe('answers sqlgate cuts', () => {
  it('a stream whose client stopped reading is given up and logged with its 200 and cut: true', async () => {
    const { logger, lines } = captureLogs('info');
    const server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logger,
      answerStallTimeoutMs: 1_000,
    });
    try {
      // Far more than loopback's buffers hold while the client reads nothing.
      const body = JSON.stringify(
        target({ sql: "SELECT repeat('x', 1000) AS v FROM generate_series(1, 200000)" }),
      );
      const unread = httpRequest(`${server.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      });
      unread.on('error', () => undefined);
      unread.on('response', (answer: IncomingMessage) => answer.pause());
      unread.end(body);
      await eventually(
        async () => lines().some((line) => line.msg === 'request' && line.path === '/api/query'),
        { withinMs: 10_000 },
      );
      const logged = lines().filter((line) => line.msg === 'request');
      expect(logged).toEqual([expect.objectContaining({ status: 200, cut: true })]);
      expect(logged[0]).not.toHaveProperty('aborted');
      unread.destroy();
    } finally {
      await server.close();
    }
  }, 30_000);

  it.each(['1', '2'])(
    'WORKERS=%s: a request still running when the grace period ends answers 409 cancelled; one without an answer 6 s later is cut; both logged so',
    async (workers) => {
      const sqlgate = await startSqlgateProcess({
        WORKERS: workers,
        LOG_LEVEL: 'info',
        BODY_TIMEOUT_MS: '60000',
      });
      const port = Number(new URL(sqlgate.url).port);
      const marker = `grace_${workers}`;
      try {
        const sleeping = fetch(`${sqlgate.url}/api/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(target({ sql: `SELECT pg_sleep(60) AS ${marker}` })),
        }).then(async (response) => ({ status: response.status, body: await response.json() }));
        // A body that never arrives whole: nothing runs for it, so nothing can answer it.
        const unfinished = new Promise<string>((resolve) => {
          const socket = connect(port, '127.0.0.1', () =>
            socket.write(
              'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
                'Content-Length: 100\r\n\r\n{"sql":',
            ),
          );
          let received = '';
          socket.setEncoding('utf8');
          socket.on('data', (chunk: string) => (received += chunk));
          socket.on('error', () => undefined);
          socket.on('close', () => resolve(received));
        });
        await eventually(() => statementRuns(marker), { withinMs: 10_000 });

        process.kill(sqlgate.pid, 'SIGTERM');
        const answer = await sleeping;
        expect(answer).toMatchObject({
          status: 409,
          body: { cancelled: true, error: { code: '57014' } },
        });
        expect(await unfinished).toBe('');
        await sqlgate.settle(30_000);
        expect(sqlgate.exit()).toBe('exited with code 0');

        const logged = requestLines(sqlgate.output());
        expect(logged).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ status: 409, cut: true }),
            expect.objectContaining({ status: 503, cut: true }),
          ]),
        );
        expect(logged.filter((line) => line.status === 499 || line.aborted)).toEqual([]);
      } finally {
        await sqlgate.stop();
      }
    },
    60_000,
  );
});

/** The request lines of a sqlgate process's output (quoted line by line). */
function requestLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .map((line) => line.replace(/^\| /, ''))
    .filter((line) => line.startsWith('{') && line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
