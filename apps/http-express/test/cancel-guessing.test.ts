/**
 * POST /api/requests/{requestId}/cancel is no password oracle (docs/decisions.md 10.34), against
 * the real server over TCP from many client addresses (any of 127.0.0.0/8 reaches 127.0.0.1):
 * guesses never cancel a request whose password they hold too late, a wrong password is answered
 * as an id that runs nothing, and one client's failures limit that client only.
 */
import { request, type ClientRequest } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { eventually } from '@sqlgate/testing';
import { FAILED_CANCELS_PER_REQUEST } from '@sqlgate/core';
import { FAILED_CANCEL_ANSWER_MS } from '../src/cancel-endpoint';
import { FAILED_CANCELS_PER_CLIENT } from '../src/cancel-limit';
import { startServer, type RunningServer } from '../src/server';
import { rawRequest, type RawResponse } from './raw-http';
import { database, sql, target } from './support';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The n-th client address of 127.0.0.0/8, past 127.0.0.1. */
const clientAddress = (n: number): string => `127.0.${Math.floor(n / 250) + 1}.${(n % 250) + 1}`;

/** Connection fields of a cancel: the test database's, with `password`. */
const login = (password: string | undefined) => ({
  host: database.host,
  port: database.port,
  user: database.user,
  database: database.database,
  ...(password === undefined ? {} : { password }),
});

interface Victim {
  /** Settles with the status of its answer, or `no answer` once it was aborted. */
  answer: Promise<number | 'no answer'>;
  abort(): void;
}

/** A request of `SELECT pg_sleep(60)` under `requestId`, marked so pg_stat_activity shows it. */
function startVictim(server: RunningServer, requestId: string, marker: string): Victim {
  let outgoing: ClientRequest | undefined;
  const answer = new Promise<number | 'no answer'>((resolve) => {
    outgoing = request(`${server.url}/api/query`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    });
    outgoing.on('response', (incoming) => {
      incoming.resume();
      resolve(incoming.statusCode ?? 0);
    });
    outgoing.on('error', () => resolve('no answer'));
    outgoing.end(JSON.stringify(target({ sql: `SELECT pg_sleep(60) AS ${marker}` })));
  });
  return { answer, abort: () => outgoing?.destroy() };
}

async function isRunning(marker: string): Promise<boolean> {
  const rows = await sql(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
    [`%AS ${marker}%`],
  );
  return Number(rows[0]?.n) === 1;
}

function cancel(
  server: RunningServer,
  requestId: string,
  password: string | undefined,
  from = '127.0.0.1',
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return rawRequest({
    port: server.port,
    method: 'POST',
    path: `/api/requests/${requestId}/cancel`,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(login(password)),
    localAddress: from,
  });
}

/** Status and body: what a caller reads of an answer. */
const readable = (answer: RawResponse) => ({ status: answer.status, body: answer.json() });

/** Headers but the two that differ between any two answers. */
function headersOf(answer: RawResponse): Record<string, unknown> {
  const { date: _date, 'x-request-id': _id, ...rest } = answer.headers;
  return rest;
}

describe('cancel by request id is no password oracle', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
  });
  afterAll(() => server?.close());

  it('2,000 guesses from 200 addresses, the password among them after the limit, cancel nothing', async () => {
    const victim = startVictim(server, 'victim-report', 'victim_one');
    try {
      await eventually(() => isRunning('victim_one'), { withinMs: 10_000 });
      const nothing = readable(await cancel(server, 'no-such-request', 'guess'));
      expect(nothing).toEqual({
        status: 404,
        body: { error: expect.any(String), code: 'REQUEST_NOT_FOUND' },
      });

      const guesses = Array.from({ length: 2000 }, (_, index) => `guess-${index}`);
      const late = 1500;
      expect(late).toBeGreaterThan(FAILED_CANCELS_PER_REQUEST);
      guesses[late] = database.password ?? '';
      // Each client sends no more than its own limit allows, so that every guess is tried.
      const clients = guesses.length / FAILED_CANCELS_PER_CLIENT;
      const answers = await Promise.all(
        Array.from({ length: clients }, async (_, client) => {
          const mine: { guess: number; answer: ReturnType<typeof readable> }[] = [];
          for (let turn = 0; turn < FAILED_CANCELS_PER_CLIENT; turn++) {
            const guess = client + turn * clients;
            const answer = await cancel(
              server,
              'victim-report',
              guesses[guess],
              clientAddress(client),
            );
            mine.push({ guess, answer: readable(answer) });
          }
          return mine;
        }),
      );
      const told = answers.flat().filter(({ answer }) => !isDeepStrictEqual(answer, nothing));
      expect(told).toEqual([]);
      expect(answers.flat()).toHaveLength(2000);

      // The statement still runs, and its caller has had no answer.
      expect(await isRunning('victim_one')).toBe(true);
      expect(await Promise.race([victim.answer, sleep(100).then(() => 'pending')])).toBe('pending');
      // Its own caller cannot cancel it by id any more either (it can still go away, 10.7).
      expect(readable(await cancel(server, 'victim-report', database.password))).toEqual(nothing);
    } finally {
      victim.abort();
    }
    await eventually(async () => !(await isRunning('victim_one')), { withinMs: 10_000 });
  }, 60_000);

  it('answers a wrong password as an id that runs nothing: status, body, headers, and not sooner', async () => {
    const victim = startVictim(server, 'victim-headers', 'victim_two');
    try {
      await eventually(() => isRunning('victim_two'), { withinMs: 10_000 });
      const from = clientAddress(400);
      const sentAt = performance.now();
      const wrong = await cancel(server, 'victim-headers', 'wrong', from);
      const wrongMs = performance.now() - sentAt;
      const unknownSentAt = performance.now();
      const unknown = await cancel(server, 'nothing-runs-here', 'wrong', from);
      const unknownMs = performance.now() - unknownSentAt;
      expect(readable(wrong)).toEqual(readable(unknown));
      expect(headersOf(wrong)).toEqual(headersOf(unknown));
      // Neither is answered before the delay every failed cancel waits for.
      expect(Math.min(wrongMs, unknownMs)).toBeGreaterThanOrEqual(FAILED_CANCEL_ANSWER_MS);

      // The right password, within the limits, still cancels: 200, and the request answers 409.
      const cancelled = await cancel(server, 'victim-headers', database.password, from);
      expect(readable(cancelled)).toEqual({ status: 200, body: { cancelled: true } });
      expect(await victim.answer).toBe(409);
    } finally {
      victim.abort();
    }
  }, 30_000);

  it("one client's failures limit that client only: its cancels wait (429), another's are tried", async () => {
    const victim = startVictim(server, 'victim-other-client', 'victim_three');
    const attacker = clientAddress(500);
    try {
      await eventually(() => isRunning('victim_three'), { withinMs: 10_000 });
      for (let failure = 0; failure < FAILED_CANCELS_PER_CLIENT; failure++) {
        expect((await cancel(server, `unknown-${failure}`, 'guess', attacker)).status).toBe(404);
      }
      // Not tried, even with the right password: a right guess answered now would be an oracle.
      const limited = await cancel(server, 'victim-other-client', database.password, attacker);
      expect(readable(limited)).toEqual({
        status: 429,
        body: { error: expect.stringMatching(/retry in \d+ s/), code: 'CANCEL_LIMITED' },
      });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(await isRunning('victim_three')).toBe(true);

      const owner = await cancel(server, 'victim-other-client', database.password);
      expect(readable(owner)).toEqual({ status: 200, body: { cancelled: true } });
      expect(await victim.answer).toBe(409);
    } finally {
      victim.abort();
    }
  }, 30_000);

  /** A client's whole share of failures, sent through a proxy that says it is `forwardedFor`. */
  const failTenTimes = async (
    proxied: RunningServer,
    forwardedFor: string | ((failure: number) => string),
  ) => {
    for (let failure = 0; failure < FAILED_CANCELS_PER_CLIENT; failure++) {
      const answer = await cancel(proxied, `unknown-${failure}`, 'guess', '127.0.0.1', {
        'x-forwarded-for': typeof forwardedFor === 'string' ? forwardedFor : forwardedFor(failure),
      });
      expect(answer.status).toBe(404);
    }
  };
  const statusFor = async (proxied: RunningServer, forwardedFor: string) =>
    (await cancel(proxied, 'unknown', 'guess', '127.0.0.1', { 'x-forwarded-for': forwardedFor }))
      .status;

  it('behind a proxy TRUST_PROXY names, clients are told apart by X-Forwarded-For, IPv6 by its /64', async () => {
    const behindProxy = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      trustProxy: ['loopback'],
    });
    try {
      await failTenTimes(behindProxy, '203.0.113.1');
      expect(await statusFor(behindProxy, '203.0.113.1')).toBe(429);
      expect(await statusFor(behindProxy, '203.0.113.2')).toBe(404);
      await failTenTimes(behindProxy, '2001:db8:0:7::1');
      expect(await statusFor(behindProxy, '2001:db8:0:7::ffff')).toBe(429);
      expect(await statusFor(behindProxy, '2001:db8:0:8::1')).toBe(404);
    } finally {
      await behindProxy.close();
    }

    // Without TRUST_PROXY the header is the client's own claim, and changes nothing.
    const direct = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
    try {
      await failTenTimes(direct, '203.0.113.1');
      expect(await statusFor(direct, '203.0.113.99')).toBe(429);
    } finally {
      await direct.close();
    }
  }, 30_000);

  it('behind a proxy, every spelling of an address is one client, and whatever is no address one more', async () => {
    const behindProxy = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      trustProxy: ['loopback'],
    });
    try {
      const spellings = [
        '[2001:db8:0:9::5]',
        '2001:db8:0:9::4%eth0',
        '2001:DB8:0:9:0:0:0:6',
        '[fe80::1%eth0]',
      ];
      await failTenTimes(behindProxy, (failure) => spellings[failure % 3] as string);
      expect(await statusFor(behindProxy, '[2001:db8:0:9::7]')).toBe(429);
      expect(await statusFor(behindProxy, '2001:db8:0:a::1')).toBe(404);
      await failTenTimes(behindProxy, (failure) =>
        failure % 2 === 0 ? '::ffff:cb00:7132' : '[203.0.113.50]',
      );
      expect(await statusFor(behindProxy, '203.0.113.50')).toBe(429);
      // The port a proxy may append names no other client.
      expect(await statusFor(behindProxy, '203.0.113.50:443')).toBe(429);
      // Tokens that are no address cannot each be a client of their own.
      await failTenTimes(behindProxy, (failure) => `client-${failure}`);
      expect(await statusFor(behindProxy, 'yet-another-token')).toBe(429);
      expect(await statusFor(behindProxy, '203.0.113.51:443')).toBe(404);
      expect(await statusFor(behindProxy, spellings[3] as string)).toBe(404);
    } finally {
      await behindProxy.close();
    }
  }, 30_000);
});
