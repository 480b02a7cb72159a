/**
 * A body is read as the bytes it is: a compressed one (Content-Encoding) is refused with 415, and
 * one sent with a transfer coding other than chunked with 501, on the query route, the app's JSON
 * routes and POST /api/copy alike. Node's parser takes chunks apart and passes other codings on.
 */
import { gzipSync } from 'node:zlib';
import { startServer, type RunningServer } from '../src/server';
import { rawExchange } from './raw-http';
import { target } from './support';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});
afterAll(() => server.close());

const body = JSON.stringify(target({ sql: 'SELECT 1 AS one' }));

/** A request whose body goes out in one chunk, under the given Transfer-Encoding. */
function chunked(path: string, contentType: string, payload: Buffer, transferEncoding: string) {
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\n` +
    `Transfer-Encoding: ${transferEncoding}\r\nConnection: close\r\n\r\n` +
    `${payload.length.toString(16)}\r\n${payload.toString('latin1')}\r\n0\r\n\r\n`
  );
}

function answerOf(text: string): { status: number; json: unknown } {
  const [head = '', rest = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), json: JSON.parse(rest) };
}

describe.each(['/api/query', '/api/sessions'])('%s', (path) => {
  it.each([
    ['gzip, chunked', Buffer.from(body)],
    ['gzip, chunked', gzipSync(body)],
    ['deflate,chunked', Buffer.from(body)],
  ])('refuses Transfer-Encoding %s with 501 in JSON', async (coding, payload) => {
    const answer = answerOf(
      await rawExchange(server.port, chunked(path, 'application/json', payload, coding)),
    );
    expect(answer.status).toBe(501);
    expect(answer.json).toEqual({
      error: `Transfer-Encoding '${coding}' is not supported; send the body as it is or chunked`,
    });
  });

  it('refuses Content-Encoding gzip with 415', async () => {
    const payload = gzipSync(body);
    const answer = answerOf(
      await rawExchange(
        server.port,
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Content-Encoding: gzip\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n` +
          payload.toString('latin1'),
      ),
    );
    expect(answer).toEqual({
      status: 415,
      json: { error: "Content-Encoding 'gzip' is not supported" },
    });
  });
});

it.each(['Identity', '', ' identity , IDENTITY'])(
  'serves a body whose Content-Encoding is %j: no coding',
  async (coding) => {
    const answer = answerOf(
      await rawExchange(
        server.port,
        'POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          `Content-Encoding: ${coding}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      ),
    );
    expect(answer.status).toBe(200);
  },
);

it('answers once when the parser refuses a body it already answered for', async () => {
  // The 501 leaves before the body; Node's parser then refuses the body's coding.
  const text = await rawExchange(
    server.port,
    'POST /api/copy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\n' +
      'Transfer-Encoding: chunked;foo=bar\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  );
  expect(text.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
});

it('serves a chunked body, whatever the case of the coding', async () => {
  const answer = answerOf(
    await rawExchange(
      server.port,
      chunked('/api/query', 'application/json', Buffer.from(body), 'Chunked'),
    ),
  );
  expect(answer.status).toBe(200);
  expect(answer.json).toMatchObject({ rows: [{ one: 1 }] });
});

it('refuses an upload to POST /api/copy under another coding before reading it', async () => {
  const boundary = 'b0undary';
  const multipart = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n` +
      `${JSON.stringify(target({ sql: 'COPY nowhere FROM STDIN' }))}\r\n--${boundary}--\r\n`,
  );
  const type = `multipart/form-data; boundary=${boundary}`;
  const transfer = answerOf(
    await rawExchange(
      server.port,
      chunked('/api/copy', type, gzipSync(multipart), 'gzip, chunked'),
    ),
  );
  expect(transfer.status).toBe(501);
  const content = answerOf(
    await rawExchange(
      server.port,
      `POST /api/copy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\n` +
        `Content-Encoding: br\r\nContent-Length: ${multipart.length}\r\nConnection: close\r\n\r\n` +
        multipart.toString('latin1'),
    ),
  );
  expect(content).toEqual({
    status: 415,
    json: { error: "Content-Encoding 'br' is not supported" },
  });
});
