/**
 * A server that asks for COPY data nobody sends, or that ends a COPY ... FROM STDIN before it took
 * the data, breaks the protocol (docs/decisions.md 10.1, 10.42): 502 PROTOCOL_ERROR at once, the
 * connection ended, and no answer that claims rows were loaded. Against sqlgate's HTTP server and
 * the fake PostgreSQL of @sqlgate/testing.
 */
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  backend,
  replyWith,
  startFakePostgres,
  type BackendMessage,
  type FakePostgres,
  type Reply,
  type RoundTrip,
} from '@sqlgate/testing';
import { createTestApp, type TestApp } from './support';

/** The well-formed answer up to the statement's description, then a CopyInResponse. */
function copyInAfterDescription(answer: readonly BackendMessage[]): Reply {
  const described = answer.findIndex((message) => message.type === 'T' || message.type === 'n');
  return replyWith([...answer.slice(0, described + 1), backend.copyInResponse(1)]);
}

const COPY_CASES: Record<string, BackendMessage[]> = {
  // The COPY "ends" without ever asking for its data.
  copy_without_copy_in: [backend.commandComplete('COPY 999'), backend.readyForQuery('I')],
  // It asks for the data, then ends before sqlgate sent CopyDone.
  copy_ended_early: [
    backend.copyInResponse(1),
    backend.commandComplete('COPY 999'),
    backend.readyForQuery('I'),
  ],
};

function behaviour(trip: RoundTrip): Reply {
  const texts = trip.texts.join(' ');
  if (texts.includes('copy-in-answers-select')) return copyInAfterDescription(trip.answer);
  const name = Object.keys(COPY_CASES).find((each) => texts.includes(each));
  return name ? replyWith(COPY_CASES[name] as BackendMessage[]) : replyWith(trip.answer);
}

let fake: FakePostgres;
let testApp: TestApp;
let server: Server;
let url: URL;

beforeAll(async () => {
  fake = await startFakePostgres({ behaviour });
  testApp = createTestApp();
  server = testApp.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await testApp.close();
  await fake.close();
});

const fakeTarget = (fields: Record<string, unknown>) => ({
  host: fake.host,
  port: fake.port,
  user: 'u',
  password: 'p',
  database: 'd',
  sslMode: 'disable',
  ...fields,
});

async function query(body: Record<string, unknown>) {
  const response = await fetch(new URL('/api/query', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fakeTarget(body)),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * A POST /api/copy whose data part is begun and never finished while the answer is awaited: the
 * upload cannot have ended, so sqlgate cannot have sent CopyDone.
 */
function unfinishedCopy(sql: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const upload = httpRequest(new URL('/api/copy', url), {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XB' },
    });
    upload.on('error', reject);
    upload.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        upload.destroy();
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    upload.write(
      `--XB\r\nContent-Disposition: form-data; name="request"\r\n\r\n${JSON.stringify(
        fakeTarget({ sql }),
      )}\r\n` +
        '--XB\r\nContent-Disposition: form-data; name="data"; filename="d.csv"\r\n\r\n' +
        '1,a\n'.repeat(1000),
    );
  });
}

it('a CopyInResponse in answer to a SELECT is a protocol error at once, not a wait', async () => {
  // With timeoutMs the silent wait would end in 504 (10.6); the fault itself is 502.
  const answer = await query({ sql: "SELECT 'copy-in-answers-select' AS v", timeoutMs: 1000 });
  expect(answer).toMatchObject({ status: 502, body: { error: { code: 'PROTOCOL_ERROR' } } });
  const next = await query({ sql: "SELECT 'after' AS v" });
  expect(next).toMatchObject({ status: 200, body: { rows: [{ v: 'after' }] } });
});

it.each([
  ['without asking for the data', 'copy_without_copy_in'],
  ['after asking for it, before the data was sent', 'copy_ended_early'],
])('a COPY FROM STDIN the server completes %s: 502, no rows claimed', async (_what, table) => {
  const answer = await unfinishedCopy(`COPY ${table} FROM STDIN WITH (FORMAT csv)`);
  expect(answer).toMatchObject({ status: 502, body: { error: { code: 'PROTOCOL_ERROR' } } });
  expect(answer.body).not.toHaveProperty('rowCount');
});
