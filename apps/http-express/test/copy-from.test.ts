/**
 * POST /api/copy (docs/decisions.md 10.23): COPY ... FROM STDIN with its data streamed from a
 * multipart upload, against sqlgate as a child process and a real PostgreSQL.
 */
import http from 'node:http';
import { eventually } from '@sqlgate/testing';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { sql, target } from './support';

let sqlgate: SqlgateProcess;
const COPY_CSV = 'COPY copy_t FROM STDIN WITH (FORMAT csv)';

beforeAll(async () => {
  sqlgate = await startSqlgateProcess({
    LOG_LEVEL: 'info',
    MAX_COPY_BYTES: '100000',
    BODY_TIMEOUT_MS: '1500',
  });
}, 30_000);
afterAll(async () => {
  await sqlgate?.stop();
  await sql('DROP TABLE IF EXISTS copy_t');
});
beforeEach(async () => {
  await sql('DROP TABLE IF EXISTS copy_t; CREATE TABLE copy_t (id int PRIMARY KEY, v text)');
});

const rowsInTable = async () =>
  ((await sql('SELECT count(*)::int AS n FROM copy_t'))[0] as { n: number }).n;

/** A multipart upload of `parts`, encoded as fetch encodes a FormData, on a connection of its own. */
async function upload(
  parts: [string, string | Blob][],
  headers: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of parts) form.append(name, value);
  const encoded = new Request(sqlgate.url, { method: 'POST', body: form });
  const body = Buffer.from(await encoded.arrayBuffer());
  const contentType = encoded.headers.get('content-type') ?? '';
  return postOnNewConnection([body], { 'content-type': contentType, ...headers });
}

/**
 * POST /api/copy on a connection of its own, its body written in `pieces` `pauseMs` apart, answered
 * as a fetch Response. Not through fetch's pool: on a busy machine it may pick a kept-alive
 * connection of an earlier test just as the server's keep-alive timeout closes it, and the request
 * is then reset before the server sees it.
 */
function postOnNewConnection(
  pieces: (string | Buffer)[],
  headers: Record<string, string>,
  pauseMs = 0,
): Promise<Response> {
  const url = new URL(`${sqlgate.url}/api/copy`);
  return new Promise((resolve, reject) => {
    const client = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers,
        agent: false,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          resolve(new Response(Buffer.concat(chunks), { status: answer.statusCode ?? 0 })),
        );
        answer.on('error', reject);
      },
    );
    client.on('error', reject);
    void (async () => {
      for (const piece of pieces) {
        client.write(piece);
        if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      client.end();
    })();
  });
}

/** An upload whose body the test writes itself (and may leave unfinished). */
function openUpload(boundary = 'XB'): http.ClientRequest {
  const url = new URL(`${sqlgate.url}/api/copy`);
  const client = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    agent: false,
  });
  client.on('error', () => undefined);
  return client;
}

const request = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify(target({ sql: COPY_CSV, ...overrides }));
const requestPart = (json = request()) =>
  `--XB\r\nContent-Disposition: form-data; name="request"\r\n\r\n${json}\r\n`;
const dataHead = '--XB\r\nContent-Disposition: form-data; name="data"; filename="d.csv"\r\n\r\n';

it('loads the data part and answers COPY with the row count', async () => {
  const response = await upload([
    ['request', request()],
    ['data', new Blob(['1,a\n2,"b,c"\n3,\n'])],
  ]);
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ command: 'COPY', rowCount: 3 });
  expect(await sql('SELECT id, v FROM copy_t ORDER BY id')).toEqual([
    { id: 1, v: 'a' },
    { id: 2, v: 'b,c' },
    { id: 3, v: null },
  ]);
});

it('loads nothing when a row is bad, and names its line', async () => {
  const response = await upload([
    ['request', request()],
    ['data', new Blob(['1,a\nx,b\n3,c\n'])],
  ]);
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({
    error: { code: '22P02', where: expect.stringMatching(/line 2/) },
  });
  expect(await rowsInTable()).toBe(0);
});

it('refuses anything but a request part followed by a data part', async () => {
  const wrongType = await postOnNewConnection(['1,a\n'], { 'content-type': 'text/plain' });
  expect(wrongType.status).toBe(415);
  const dataFirst = await upload([
    ['data', new Blob(['1,a\n'])],
    ['request', request()],
  ]);
  expect(dataFirst.status).toBe(400);
  const notCopy = await upload([
    ['request', request({ sql: 'SELECT 1' })],
    ['data', new Blob(['1,a\n'])],
  ]);
  expect(notCopy.status).toBe(400);
  expect(await notCopy.json()).toMatchObject({
    error: expect.stringMatching(/COPY ... FROM STDIN/),
  });
  // Refused before its body is read: the small rest is read, so the client, still sending it, gets
  // the answer rather than a reset.
  const crossOrigin = await upload(
    [
      ['request', request()],
      ['data', new Blob(['1,a\n'])],
    ],
    { origin: 'https://evil.example' },
  );
  expect(crossOrigin.status).toBe(403);
  expect(await rowsInTable()).toBe(0);
});

it('refuses data over MAX_COPY_BYTES with 413, and loads none of it', async () => {
  const lines = Array.from({ length: 20_000 }, (_, i) => `${i},row ${i}\n`).join('');
  const response = await upload([
    ['request', request()],
    ['data', new Blob([lines])],
  ]);
  expect(response.status).toBe(413);
  expect(await rowsInTable()).toBe(0);
});

it('loads nothing and leaves nothing running when the client goes away mid-upload', async () => {
  const boundary = 'sqlgate-test-boundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n${request()}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="d.csv"\r\n\r\n1,a\n2,b\n`;
  const client = openUpload(boundary);
  client.write(head);
  const copying = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY copy_t%' AND state = 'active'`;
  await eventually(async () => expect(await sql(copying)).toEqual([{ n: 1 }]));
  client.destroy();
  await eventually(async () => expect(await sql(copying)).toEqual([{ n: 0 }]), {
    withinMs: 30_000,
  });
  expect(await rowsInTable()).toBe(0);
}, 60_000);

/** Sends a raw multipart body, in pieces `pauseMs` apart; resolves with the status and body. */
async function rawUpload(
  pieces: (string | Buffer)[],
  pauseMs = 0,
): Promise<{ status: number; body: string }> {
  const multipart = { 'content-type': 'multipart/form-data; boundary=XB' };
  const response = await postOnNewConnection(pieces, multipart, pauseMs);
  return { status: response.status, body: await response.text() };
}

/**
 * GET /healthz on a connection of its own: fetch may pick a kept-alive connection of an earlier
 * test just as the server's keep-alive timeout closes it, which says nothing of the server.
 */
function healthOnNewConnection(): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(`${sqlgate.url}/healthz`, { agent: false }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe('malformed and hostile uploads', () => {
  it('answers a body cut inside the data part with 400, loads nothing, and stays up', async () => {
    const cut = await rawUpload([requestPart(), dataHead, '1,a\n']);
    expect(cut.status).toBe(400);
    expect(await rowsInTable()).toBe(0);
    expect(await healthOnNewConnection()).toBe(200);
  });

  it('refuses a third part and loads nothing, even when the first two were fine', async () => {
    const response = await upload([
      ['request', request()],
      ['data', new Blob(['1,a\n'])],
      ['data', new Blob(['2,b\n'])],
    ]);
    expect(response.status).toBe(400);
    expect(await rowsInTable()).toBe(0);
  });

  it.each(['readOnly', 'dryRun', 'params'])(
    'refuses %s, which a COPY would ignore',
    async (option) => {
      const response = await upload([
        ['request', request({ [option]: option === 'params' ? [1] : true })],
        ['data', new Blob(['1,a\n'])],
      ]);
      expect(response.status).toBe(400);
      expect(await rowsInTable()).toBe(0);
    },
  );

  it('refuses a request part that is not UTF-8, never decoding it with replacements', async () => {
    // A lone 0xFF byte: never valid UTF-8.
    const json = request().replace('FROM STDIN', 'FROM STDIN \u00ff');
    const response = await rawUpload([
      Buffer.from(requestPart(json), 'latin1'),
      dataHead,
      '1,a\n\r\n--XB--\r\n',
    ]);
    expect(response.status).toBe(400);
    expect(response.body).toMatch(/not valid UTF-8/);
  });

  it('refuses a request part holding a number that parsing would change, and loads nothing', async () => {
    // 1000.0000000000000000000001 parses to 1000: the caller's number would be changed silently.
    const json = request().replace(/}$/, ',"timeoutMs":1000.0000000000000000000001}');
    const response = await upload([
      ['request', json],
      ['data', '1,a\n'],
    ]);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "'timeoutMs' must be an integer from 1 to 2147483647",
    });
    expect(await rowsInTable()).toBe(0);
  });

  it.each([
    ['a file', 'filename="d.csv"; '],
    ['a plain field', ''],
  ])(
    'refuses %s data part in base64 or quoted-printable, and loads nothing',
    async (_kind, filename) => {
      const encodings: [string, string][] = [
        ['base64', Buffer.from('1,a\n').toString('base64')],
        ['Quoted-Printable', '1,a=0A'],
      ];
      for (const [encoding, encoded] of encodings) {
        const response = await rawUpload([
          requestPart(),
          `--XB\r\nContent-Disposition: form-data; ${filename}name="data"\r\n` +
            `Content-Transfer-Encoding: ${encoding}\r\n\r\n${encoded}\r\n--XB--\r\n`,
        ]);
        expect(response.status).toBe(415);
        expect(JSON.parse(response.body)).toEqual({
          error: `The 'data' part's Content-Transfer-Encoding '${encoding.toLowerCase()}' is not supported; send its bytes as they are`,
        });
      }
      const binary = await rawUpload([
        requestPart(),
        `--XB\r\nContent-Disposition: form-data; ${filename}name="data"\r\n` +
          'Content-Transfer-Encoding: binary\r\n\r\n1,a\n\r\n--XB--\r\n',
      ]);
      expect(binary.status).toBe(200);
      expect(await rowsInTable()).toBe(1);
    },
  );

  it('takes the data as a plain field too (a browser FormData string)', async () => {
    const response = await upload([
      ['request', request()],
      ['data', '1,a\n2,b\n'],
    ]);
    expect(response.status).toBe(200);
    expect(await rowsInTable()).toBe(2);
  });

  it('lets an upload take longer than BODY_TIMEOUT_MS while its data keeps moving', async () => {
    const rows = Array.from({ length: 8 }, (_, i) => `${i},row\n`);
    const response = await rawUpload([requestPart(), dataHead, ...rows, '\r\n--XB--\r\n'], 300);
    expect(response.status).toBe(200);
    expect(await rowsInTable()).toBe(8);
  }, 20_000);

  it('ends an upload whose data stops moving, loading nothing and giving its connection back', async () => {
    const client = openUpload();
    client.write(requestPart() + dataHead + '1,a\n');
    try {
      await eventually(async () => expect(await sqlgate.activeConnections()).toBe(1));
      await eventually(async () => expect(await sqlgate.activeConnections()).toBe(0), {
        withinMs: 30_000,
      });
    } finally {
      client.destroy();
    }
    expect(await rowsInTable()).toBe(0);
  }, 60_000);

  it('holds no connection after refusing a part between request and data sent in one piece', async () => {
    const extra = '--XB\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n';
    const response = await rawUpload([requestPart() + extra + dataHead + '1,a\n\r\n--XB--\r\n']);
    expect(response.status).toBe(400);
    await eventually(async () => expect(await sqlgate.activeConnections()).toBe(0));
    expect(await rowsInTable()).toBe(0);
  });

  it.each([
    ['before its data part', '--XB\r\nContent-Disposition: form-data; name="request"\r\n\r\n{"ho'],
    ['inside its data part', () => requestPart() + dataHead + '1,a\n'],
  ])(
    'answers 408 in JSON, then closes, an upload that stalls %s',
    async (_where, sent) => {
      const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const client = openUpload();
        client.on('error', reject);
        client.on('response', (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        });
        client.write(typeof sent === 'function' ? sent() : sent);
      });
      const { status, text } = await answer;
      expect(status).toBe(408);
      // BODY_TIMEOUT_MS is 1500 here: its own answer, not a stall limit of the client's.
      expect(JSON.parse(text)).toEqual({ error: 'No data moved for 1500 ms' });
      expect(await rowsInTable()).toBe(0);
    },
    20_000,
  );
});
