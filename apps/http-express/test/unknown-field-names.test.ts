/**
 * The names of unknown fields (docs/decisions.md 3, 10.12): every body that names its unknown
 * fields in `warnings` refuses a name holding a NUL or a lone UTF-16 surrogate with 400, as it
 * refuses such values, and names a long one by its first 64 characters, never echoing it whole.
 */
import request from 'supertest';
import { createTestApp, target, type TestApp } from './support';

let testApp: TestApp;
let sessionId: string;
/** Sessions the session openings below opened, closed at the end. */
const opened: string[] = [];

beforeAll(async () => {
  testApp = createTestApp();
  const answer = await request(testApp.app).post('/api/sessions').send(target()).expect(201);
  sessionId = answer.body.sessionId as string;
});
afterAll(async () => {
  for (const id of [sessionId, ...opened]) {
    await request(testApp.app).delete(`/api/sessions/${id}`);
  }
  await testApp.close();
});

/** Every body that warns about unknown fields, with the status a body of known fields gets. */
const BODIES: ReadonlyArray<{
  name: string;
  path: () => string;
  body: () => Record<string, unknown>;
  status: number;
}> = [
  {
    name: 'a query',
    path: () => '/api/query',
    body: () => target({ sql: 'SELECT 1' }),
    status: 200,
  },
  {
    name: 'a connection test',
    path: () => '/api/test-connection',
    body: () => target(),
    status: 200,
  },
  { name: 'a session opening', path: () => '/api/sessions', body: () => target(), status: 201 },
  {
    name: "a session's query",
    path: () => `/api/sessions/${sessionId}/query`,
    body: () => ({ sql: 'SELECT 1' }),
    status: 200,
  },
  {
    name: 'a cancel (of nothing)',
    path: () => '/api/requests/nothing-runs-here/cancel',
    body: () => target(),
    status: 404,
  },
];

/** The error message of a refusal, wherever the body's kind puts it. */
function errorMessage(body: { error: unknown }): string {
  const error = body.error;
  return typeof error === 'string' ? error : (error as { message: string }).message;
}

describe.each(BODIES)('$name', ({ path, body, status }) => {
  const post = async (extra: Record<string, unknown>) => {
    const answer = await request(testApp.app)
      .post(path())
      .send({ ...body(), ...extra });
    if (typeof answer.body.sessionId === 'string') opened.push(answer.body.sessionId);
    return answer;
  };

  it('refuses an unknown field whose name holds a NUL, and still answers', async () => {
    const answer = await post({ 'colour\u0000': 1 });
    expect(answer.status).toBe(400);
    expect(errorMessage(answer.body)).toBe(
      'A field name contains a NUL character (U+0000), which no field of a request may hold',
    );
    expect(JSON.stringify(answer.body)).not.toContain('colour');
    expect((await post({})).status).toBe(status);
  });

  it('refuses an unknown field whose name holds a lone surrogate', async () => {
    const answer = await post({ ['colour\ud800']: 1 });
    expect(answer.status).toBe(400);
    expect(errorMessage(answer.body)).toBe(
      'A field name contains a lone UTF-16 surrogate (U+D800) at character 7, which is not valid Unicode',
    );
  });

  it('names a 500 KB unknown field by its first 64 characters', async () => {
    const answer = await post({ ['k'.repeat(500_000)]: 1 });
    expect(answer.status).toBe(status);
    expect(answer.body.warnings).toEqual([`unknown field '${'k'.repeat(64)}…'`]);
  });

  it('cuts a long name between characters, never inside a surrogate pair', async () => {
    const answer = await post({ [`${'k'.repeat(63)}😀${'x'.repeat(100)}`]: 1 });
    expect(answer.status).toBe(status);
    expect(answer.body.warnings).toEqual([`unknown field '${'k'.repeat(63)}😀…'`]);
  });

  it('names a short unknown field whole, with the field it may mean', async () => {
    const answer = await post({ colour: 1, ['😀'.repeat(64)]: 2 });
    expect(answer.status).toBe(status);
    expect(answer.body.warnings).toEqual([
      "unknown field 'colour'",
      `unknown field '${'😀'.repeat(64)}'`,
    ]);
  });
});

describe("the fields of 'cache'", () => {
  const query = (cache: Record<string, unknown>) =>
    request(testApp.app)
      .post('/api/query')
      .send(target({ sql: 'SELECT 1', cache }));

  it('refuses a name holding a NUL without echoing it', async () => {
    const answer = await query({ 'ttl\u0000': 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      'A field name contains a NUL character (U+0000), which no field of a request may hold',
    );
  });

  it('names an unknown one by its first 64 characters', async () => {
    const answer = await query({ ['t'.repeat(100_000)]: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      `'cache' has an unknown field '${'t'.repeat(64)}…': it accepts ttlMs and swrMs`,
    );
  });
});
