/**
 * MAX_RESULT_BYTES_TOTAL against clients that never read (docs/decisions.md 10.37): a few idle
 * sockets of one caller must not cut everyone else's answers, and answers nobody takes are given
 * up sooner once others need the memory they hold. Against a real server and PostgreSQL.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { startServer, type RunningServer } from '../src/server';
import { captureLogs, sql, target } from './support';

const MiB = 1024 * 1024;
/** 16 rows of 1 MB: more than loopback's buffers take while the client reads nothing. */
const SIXTEEN_MB = "SELECT repeat('x', 1000000) AS v FROM generate_series(1, 16)";
const ROLES = ['fair_1', 'fair_2', 'fair_3', 'fair_4', 'fair_5', 'fair_6'];
const PASSWORD = 'fair-share';

beforeAll(async () => {
  await sql(`DO $$ BEGIN
    ${ROLES.map(
      (role) =>
        `IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'; END IF;`,
    ).join('\n')}
  END $$`);
});

/** The body of the 16 MB read as `role` (the test database's own user without one). */
const sixteenMegabytesAs = (role?: string): string =>
  JSON.stringify(target({ sql: SIXTEEN_MB, ...(role ? { user: role, password: PASSWORD } : {}) }));

interface Answer {
  rows: unknown[];
  truncated?: boolean;
  warnings?: string[];
}

const read = async (server: RunningServer, body: string): Promise<Answer> => {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
};

const expectWhole = (answer: Answer): void => {
  expect(answer.truncated ?? false).toBe(false);
  expect(answer.rows).toHaveLength(16);
};

/** Sends `body` and reads none of the answer; resolves once its head came (the rows are held). */
const sendUnread = (server: RunningServer, body: string): Promise<ClientRequest> => {
  const unread = httpRequest(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
  });
  unread.on('error', () => undefined);
  return new Promise((resolve) => {
    unread.on('response', (answer: IncomingMessage) => {
      answer.pause();
      resolve(unread);
    });
    unread.end(body);
  });
};

const servers: RunningServer[] = [];
const unreadRequests: ClientRequest[] = [];
afterEach(async () => {
  for (const unread of unreadRequests.splice(0)) unread.destroy();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const serverWith = async (
  settings: Partial<Parameters<typeof startServer>[0]>,
): Promise<RunningServer> => {
  const server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    ...settings,
  });
  servers.push(server);
  return server;
};

const holdUnread = async (server: RunningServer, body: string, count: number): Promise<void> => {
  for (let index = 0; index < count; index++) unreadRequests.push(await sendUnread(server, body));
};

it('keeps another caller’s answer whole while one caller’s idle sockets hold what they may', async () => {
  // A caller may hold a quarter of 96 MiB: 24 MiB, one and a half of these answers.
  const server = await serverWith({ maxResultBytes: 20 * MiB, maxResultBytesTotal: 96 * MiB });
  // Seven answers of 16 MB would hold more than the whole 96 MiB.
  await holdUnread(server, sixteenMegabytesAs(), 7);

  expectWhole(await read(server, sixteenMegabytesAs('fair_1')));
  // The idle caller's own next answer is what is cut, and told why.
  expect(await read(server, sixteenMegabytesAs())).toMatchObject({
    truncated: true,
    truncatedBy: 'bytes',
    warnings: [expect.stringMatching(/^Rows were cut at MAX_RESULT_BYTES_TOTAL: this user's /)],
  });
}, 30_000);

it('gives up answers nobody takes sooner once another caller finds the budget held', async () => {
  // Each caller may hold one answer's 17 MiB of 64 MiB; five idle callers hold it all.
  const answerStallTimeoutMs = 12_000;
  const server = await serverWith({
    maxResultBytes: 17 * MiB,
    maxResultBytesTotal: 64 * MiB,
    answerStallTimeoutMs,
  });
  for (const role of ROLES.slice(0, 5)) await holdUnread(server, sixteenMegabytesAs(role), 1);
  const started = performance.now();
  expect(await read(server, sixteenMegabytesAs('fair_6'))).toMatchObject({
    truncated: true,
    warnings: [expect.stringMatching(/^Rows were cut at MAX_RESULT_BYTES_TOTAL: other answers /)],
  });

  // The idle answers are given up a sixth of the stall limit after that, not after the limit.
  let answer: Answer | undefined;
  while (performance.now() - started < answerStallTimeoutMs * 0.75) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    answer = await read(server, sixteenMegabytesAs('fair_6'));
    if (!answer.truncated) break;
  }
  expectWhole(answer as Answer);
}, 30_000);

it('gives up the holders a sixth of the stall limit after another caller was cut, not two sixths', async () => {
  // 36 s: the holders have 6 s from the cut. Node's own socket timeout let that pass once while
  // their write had moved at all since it was handed over, and gave them up only after 12 s.
  const answerStallTimeoutMs = 36_000;
  const contendedLimitMs = answerStallTimeoutMs / 6;
  const { logger, lines } = captureLogs('info');
  // One answer may take all of 32 MiB, so one caller's two unread answers hold nearly all of it.
  const server = await serverWith({
    maxResultBytes: 32 * MiB,
    maxResultBytesTotal: 32 * MiB,
    answerStallTimeoutMs,
    logger,
  });
  await holdUnread(server, sixteenMegabytesAs('fair_1'), 2);
  expect(await read(server, sixteenMegabytesAs('fair_2'))).toMatchObject({
    truncated: true,
    warnings: [expect.stringMatching(/^Rows were cut at MAX_RESULT_BYTES_TOTAL: other answers /)],
  });
  const cutAnswered = performance.now();

  const holdersGivenUp = (): boolean =>
    lines().filter((line) => line.msg === 'request' && line.status === 200 && line.cut === true)
      .length === 2;
  // Half the limit again of slack: a late timer passes, the second limit Node allowed does not.
  while (!holdersGivenUp() && performance.now() - cutAnswered < contendedLimitMs * 1.5) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(holdersGivenUp()).toBe(true);
  expectWhole(await read(server, sixteenMegabytesAs('fair_2')));
}, 60_000);
