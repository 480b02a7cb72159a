/**
 * A key given twice in one object of a body is refused (docs/decisions.md 10.8): JSON.parse keeps
 * the last one, so a proxy that read the first `sql` could be bypassed. Against a real listening
 * server and PostgreSQL: the direct query path, an app route, and the request part of an upload.
 */
import { startServer, type RunningServer } from '../src/server';
import { sql, target } from './support';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
  await sql('DROP TABLE IF EXISTS duplicate_keys_t; CREATE TABLE duplicate_keys_t (v int)');
});
afterAll(async () => {
  await server.close();
  await sql('DROP TABLE IF EXISTS duplicate_keys_t');
});

/** A body with the test database's fields, then `fields` as written. */
const body = (fields: string): string => `{${JSON.stringify(target()).slice(1, -1)},${fields}}`;

const post = (path: string, text: string) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
  });

const tableExists = async (): Promise<boolean> =>
  (await sql("SELECT to_regclass('duplicate_keys_t') IS NOT NULL AS present"))[0]?.present === true;

it('refuses a second sql before anything runs, naming the key', async () => {
  const response = await post(
    '/api/query',
    body('"sql":"SELECT 1","sql":"DROP TABLE duplicate_keys_t"'),
  );
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    error: 'The key "sql" appears twice in one object; send each key once',
  });
  expect(await tableExists()).toBe(true);
});

it('refuses a key given twice inside a parameter, however it is escaped', async () => {
  const response = await post(
    '/api/query',
    body('"sql":"SELECT $1::jsonb AS j","params":[{"role":"user","\\u0072ole":"admin"}]'),
  );
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    error: 'The key "role" appears twice in one object; send each key once',
  });
});

it('refuses it on the routes of the app too', async () => {
  const response = await post('/api/sessions', body('"database":"postgres"'));
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    error: 'The key "database" appears twice in one object; send each key once',
  });
});

it("refuses it in an upload's request part, loading nothing", async () => {
  const form = new FormData();
  form.append('request', body('"sql":"COPY duplicate_keys_t FROM STDIN","sql":"SELECT 1"'));
  form.append('data', new Blob(['1\n2\n']));
  const response = await fetch(`${server.url}/api/copy`, { method: 'POST', body: form });
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    error: 'The key "sql" appears twice in one object; send each key once',
  });
  expect(await sql('SELECT count(*)::int AS n FROM duplicate_keys_t')).toEqual([{ n: 0 }]);
});

it('takes one key in objects side by side', async () => {
  const response = await post(
    '/api/query',
    body('"sql":"SELECT $1::jsonb AS j","params":[{"x":{"a":1},"y":{"a":2}}]'),
  );
  expect(response.status).toBe(200);
  expect(((await response.json()) as { rows: unknown[] }).rows).toEqual([
    { j: { x: { a: 1 }, y: { a: 2 } } },
  ]);
});
