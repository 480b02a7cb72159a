/**
 * sqlgate mounted in a host app behind the host's own body parser (docs/decisions.md 10.39): a
 * real Express host with `express.json()` at app level, then sqlgate at /db, against the real
 * PostgreSQL. The numbers and errors a parser before sqlgate would change or answer in HTML.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { QueryService } from '@sqlgate/core';
import express, { type Express } from 'express';
import request from 'supertest';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { MOUNT_ORDER_WARNING, REPLACED_BYTES_MESSAGE } from '../src/mounted-body';
import { createServiceFromConfig } from '../src/server';
import { internalMessageIn } from './response-inspector';
import { captureLogs, target } from './support';

let service: QueryService;
beforeAll(() => {
  service = createServiceFromConfig(loadConfig({}));
});
afterAll(() => service.close());

/** A host app: its JSON parser first, then sqlgate at /db, then a route and error handler of its own. */
function hostApp(
  parser: express.RequestHandler = express.json(),
  maxBodyBytes?: number,
): {
  host: Express;
  warnings: () => unknown[];
} {
  const logs = captureLogs('warn');
  const host = express();
  host.use(parser);
  host.use(
    '/db',
    createApp({ service, logger: logs.logger, ...(maxBodyBytes ? { maxBodyBytes } : {}) }),
  );
  host.post('/host/echo', (req, res) => {
    res.json(req.body);
  });
  host.use(((error, _req, res, _next) => {
    res
      .status(418)
      .type('text/plain')
      .send(`host's own handler: ${String(error.type)}`);
  }) as express.ErrorRequestHandler);
  return { host, warnings: () => logs.lines().map((line) => line.msg) };
}

const query = (fields: string): string => `{${JSON.stringify(target()).slice(1, -1)},${fields}}`;

const post = (host: Express, path: string, body: string) =>
  request(host).post(path).set('content-type', 'application/json').send(body);

describe('sqlgate behind express.json()', () => {
  it('refuses an integer the parser rounded, instead of sending it rounded', async () => {
    const { host } = hostApp();
    const response = await post(
      host,
      '/db/api/query',
      query('"sql":"SELECT $1::text AS v","params":[9007199254740993]'),
    );
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error:
        'The number 9007199254740992, as a body parser before sqlgate read it, cannot be carried exactly by JSON; send it as a string',
    });
    // Deep in a parameter, among 200,000 values of one object.
    const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]));
    const deep = await post(
      hostApp(express.json({ limit: '10mb' }), 10_000_000).host,
      '/db/api/query',
      query(`"sql":"SELECT 1","params":[${JSON.stringify(wide).slice(0, -1)},"z":[[-1e300]]}]`),
    );
    expect(deep.status).toBe(400);
    expect(deep.body.error).toMatch(/^The number -1e\+300, as a body parser before sqlgate/);
    // A number too large for a double at all arrived as Infinity.
    const overflow = await post(host, '/db/api/query', query('"sql":"SELECT 1","timeoutMs":1e400'));
    expect(overflow.status).toBe(400);
    expect(overflow.body.error).toMatch(/^The number Infinity, as a body parser before sqlgate/);
  });

  it('answers invalid JSON with its JSON 400, never the HTML page with a stack trace', async () => {
    const { host } = hostApp();
    const response = await post(host, '/db/api/query', '{"sql": SELECT');
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({ error: 'Request body is not valid JSON' });
    expect(internalMessageIn(response.text)).toBeUndefined();
  });

  it("answers a body over the parser's limit with its JSON 413", async () => {
    const { host } = hostApp();
    const large = query(`"sql":"SELECT '${'x'.repeat(200_000)}'"`);
    const response = await post(host, '/db/api/query', large);
    expect(response.status).toBe(413);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({ error: 'Request body too large' });
  });

  it('serves a normal request, and says once in the log that it must be mounted first', async () => {
    const { host, warnings } = hostApp();
    for (let i = 0; i < 3; i++) {
      const response = await post(
        host,
        '/db/api/query',
        query('"sql":"SELECT $1::int8 AS n, $2::text AS t","params":[9007199254740991,"x"]'),
      );
      expect(response.status).toBe(200);
      expect(response.body.rows).toEqual([{ n: '9007199254740991', t: 'x' }]);
    }
    expect(warnings()).toEqual([MOUNT_ORDER_WARNING]);
    expect(MOUNT_ORDER_WARNING).toMatch(
      /app\.use\('\/db', createApp\(\.\.\.\)\) before app\.use\(express\.json\(\)\)/,
    );
  });

  it("leaves the host's errors on its own paths to the host", async () => {
    const { host } = hostApp();
    const response = await post(host, '/host/echo', '{"a": oops');
    expect(response.status).toBe(418);
    expect(response.text).toBe("host's own handler: entity.parse.failed");
  });

  it('warns through the process when the app was given no logger', async () => {
    const host = express();
    host.use(express.json());
    host.use('/db', createApp({ service }));
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await post(host, '/db/api/query', query('"sql":"SELECT 1"')).expect(200);
      await post(host, '/db/api/query', '{').expect(400);
      expect(emitWarning.mock.calls).toEqual([
        [MOUNT_ORDER_WARNING, { code: 'SQLGATE_MOUNT_ORDER' }],
      ]);
    } finally {
      emitWarning.mockRestore();
    }
  });
});

describe('sqlgate behind a parser that keeps the raw text', () => {
  const keepingRawBody = express.json({
    verify: (req, _res, raw) => {
      (req as express.Request & { rawBody?: Buffer }).rawBody = raw;
    },
  });

  it("checks the raw text as its own reader does: each literal's digits, keys given twice", async () => {
    const { host } = hostApp(keepingRawBody);
    const rounded = await post(
      host,
      '/db/api/query',
      query('"sql":"SELECT $1::text AS v","params":[9007199254740993]'),
    );
    expect(rounded.status).toBe(400);
    expect(rounded.body).toEqual({
      error:
        "The number 9007199254740993 in 'params' cannot be carried exactly by JSON; send it as a string",
    });
    const twice = await post(host, '/db/api/query', query('"sql":"SELECT 1","sql":"SELECT 2"'));
    expect(twice.status).toBe(400);
    expect(twice.body).toEqual({
      error: 'The key "sql" appears twice in one object; send each key once',
    });
    // 2^53 itself, sent as written, is exact: the raw text shows it.
    const exact = await post(
      host,
      '/db/api/query',
      query('"sql":"SELECT $1::text AS v","params":[9007199254740992]'),
    );
    expect(exact.status).toBe(200);
    expect(exact.body.rows).toEqual([{ v: '9007199254740992' }]);
  });
});

describe('bytes that are not UTF-8, behind a parser that decoded them', () => {
  /** `{...target, "sql": "SELECT '<bytes>' AS a"}` with `bytes` as they are, not as JSON escapes. */
  const selecting = (bytes: Buffer): Buffer =>
    Buffer.concat([
      Buffer.from(query(`"sql":"SELECT '`).slice(0, -1)),
      bytes,
      Buffer.from(`' AS a"}`),
    ]);
  /** POSTs `body` as it is to the host, listening on a port of its own (supertest re-encodes it). */
  const postBytes = async (
    host: Express,
    body: Buffer,
  ): Promise<{ status: number; body: { error?: string; rows?: unknown[] } }> => {
    const listening = host.listen(0, '127.0.0.1');
    await once(listening, 'listening');
    try {
      const { port } = listening.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/db/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Blob([new Uint8Array(body)]),
      });
      return { status: response.status, body: await response.json() };
    } finally {
      listening.close();
      listening.closeAllConnections();
    }
  };
  const invalid = Buffer.from([0xff]);
  const replacementCharacter = Buffer.from('\ufffd');

  it.each([
    ['a text parser', express.text({ type: '*/*' })],
    ['express.json()', express.json()],
  ])(
    'refuses, behind %s, a body whose invalid bytes became U+FFFD, saying to mount sqlgate first',
    async (_parser, parser) => {
      const response = await postBytes(hostApp(parser).host, selecting(invalid));
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: REPLACED_BYTES_MESSAGE });
      expect(REPLACED_BYTES_MESSAGE).toMatch(/mount sqlgate before any body parser/);
      // U+FFFD sent as it is cannot be told from it, and is refused too.
      expect((await postBytes(hostApp(parser).host, selecting(replacementCharacter))).status).toBe(
        400,
      );
    },
  );

  it('passes U+FFFD written as an escape behind a text parser: the text shows what was sent', async () => {
    const response = await post(
      hostApp(express.text({ type: '*/*' })).host,
      '/db/api/query',
      query('"sql":"SELECT \'\\ufffd\' AS a"'),
    );
    expect(response.status).toBe(200);
    expect(response.body.rows).toEqual([{ a: '\ufffd' }]);
  });

  it('keeps the exact check where the bytes are kept: raw parser, rawBody', async () => {
    const keepingRawBody = express.json({
      verify: (req, _res, raw) => {
        (req as express.Request & { rawBody?: Buffer }).rawBody = raw;
      },
    });
    for (const parser of [express.raw({ type: '*/*' }), keepingRawBody]) {
      const { host } = hostApp(parser);
      const refused = await postBytes(host, selecting(invalid));
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'Request body is not valid UTF-8' });
      const sent = await postBytes(host, selecting(replacementCharacter));
      expect(sent.status).toBe(200);
      expect(sent.body.rows).toEqual([{ a: '\ufffd' }]);
    }
  });
});
