/**
 * A caller that went away gets its statement cancelled; a server that ignores the cancel must not
 * keep the pooled connection busy for ever: after a grace it is closed (docs/decisions.md 10.7).
 */
import { createQueryService } from '@sqlgate/core';
import { eventually, startFakePostgres, type FakePostgres } from '@sqlgate/testing';
import { createPostgresConnections } from '../src';

let fake: FakePostgres;
beforeAll(async () => {
  // Logs in, then never answers a query, and ignores cancel requests.
  fake = await startFakePostgres({ behaviour: () => ({ chunks: [], then: 'hang' }) });
});
afterAll(() => fake.close());

it('closes the connection of an abandoned request whose server ignores the cancel', async () => {
  const connections = createPostgresConnections();
  const service = createQueryService({ connections });
  try {
    const controller = new AbortController();
    const started = performance.now();
    const answer = service.execute(
      {
        target: { host: fake.host, port: fake.port, user: 'u', database: 'd', sslMode: 'disable' },
        sql: 'SELECT 1',
        options: { rowMode: 'object', readOnly: false, dryRun: false },
      },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 1000);
    // The server never answers: only the close after the grace can end the request.
    const { body } = await answer;
    expect(body).not.toEqual({ error: { message: 'The request was aborted', code: 'ABORTED' } });
    // Not before the grace (a slow machine only makes it later).
    expect(performance.now() - started).toBeGreaterThan(5500);
    await eventually(() => expect(fake.cancelRequests).toBeGreaterThan(0));
    await eventually(() =>
      expect(service.poolStats()).toEqual([expect.objectContaining({ activeConnections: 0 })]),
    );
  } finally {
    await service.close();
  }
}, 60_000);
