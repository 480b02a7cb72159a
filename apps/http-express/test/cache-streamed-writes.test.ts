/**
 * A streamed answer reports each statement's `end` as it happens, a COMMIT's included: by then the
 * result cache must have dropped what the commit changed, though the request runs on
 * (docs/decisions.md 10.27).
 */
import { createTestApp, sql, target, type TestApp } from './support';
import { readQueryBody } from '../src/contract';

let testApp: TestApp;
beforeAll(async () => {
  await sql(
    'DROP TABLE IF EXISTS streamed_writes_t; CREATE TABLE streamed_writes_t (v int); INSERT INTO streamed_writes_t VALUES (1)',
  );
});
afterAll(async () => {
  await sql('DROP TABLE IF EXISTS streamed_writes_t');
});
beforeEach(() => {
  testApp = createTestApp();
});
afterEach(() => testApp.close());

it('explicit COMMIT streamed: a read after the COMMIT event is not served the old entry', async () => {
  const { service } = testApp;
  const read = () =>
    service.execute(readQueryBody(target({ sql: 'SELECT v FROM streamed_writes_t', cache: true })));
  expect((await read()).body).toMatchObject({ rows: [{ v: 1 }] }); // kept

  const streamed = await service.stream(
    readQueryBody(
      target({ sql: 'BEGIN; UPDATE streamed_writes_t SET v = 3; COMMIT; SELECT pg_sleep(1)' }),
    ),
    { rows: 'parsed' },
  );
  if (!streamed.streamed) throw new Error('not streamed');
  const events = streamed.events[Symbol.asyncIterator]();
  for (;;) {
    const { value, done } = await events.next();
    if (done) throw new Error('stream ended');
    if (value.type === 'end' && value.command === 'COMMIT') break;
  }
  expect(await sql('SELECT v FROM streamed_writes_t')).toEqual([{ v: 3 }]); // committed, and reported so
  const after = await read();
  for (let next = await events.next(); !next.done; next = await events.next());

  expect(after.body).toMatchObject({ rows: [{ v: 3 }] });
});
