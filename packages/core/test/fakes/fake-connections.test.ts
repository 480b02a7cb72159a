/** The fake's own behaviour beyond the port contract: scripting, recording, faults. */
import { ConnectionError } from '../../src/errors';
import type { RunOptions } from '../../src/ports/connections';
import { orThrow } from '../../src/ports/settled';
import {
  connectionLost,
  databaseError,
  FakeConnectionProvider,
  fakeTarget,
} from './fake-connections';

const options: RunOptions = { rowMode: 'object', maxRows: 10 };

describe('FakeConnectionProvider', () => {
  it('answers by the latest matching rule; a once rule is used up, per call', async () => {
    const fake = new FakeConnectionProvider()
      .on(/^SELECT/, { rows: [{ any: 1 }] })
      .on('SELECT 2', { rows: [{ two: 2 }] })
      .once('SELECT 2', { error: databaseError('40001', 'retry me') }, 2);
    const connection = await orThrow(fake.acquire(fakeTarget));

    await expect(orThrow(connection.run('SELECT 2', options))).rejects.toMatchObject({
      sqlState: '40001',
    });
    await expect(orThrow(connection.run('SELECT 2', options))).rejects.toMatchObject({
      sqlState: '40001',
    });
    expect((await orThrow(connection.run('SELECT 2', options))).rows).toEqual([{ two: 2 }]);
    expect((await orThrow(connection.run('SELECT 9', options))).rows).toEqual([{ any: 1 }]);
  });

  it('records every call and what the server executed', async () => {
    const fake = new FakeConnectionProvider();
    const connection = await orThrow(fake.acquire(fakeTarget));
    await connection.runBatch(['UPDATE t SET a = 1'], {
      ...options,
      before: ['BEGIN'],
      after: ['COMMIT'],
    });
    await connection.cancel();
    connection.release({ resetSession: true });
    await fake.settled();

    expect(fake.calls.map((call) => call.kind)).toEqual([
      'acquire',
      'runBatch',
      'cancel',
      'release',
    ]);
    expect(fake.sent()).toEqual(['BEGIN', 'UPDATE t SET a = 1', 'COMMIT']);
    expect(fake.resets()).toEqual(['DISCARD ALL']);
    expect(fake.poolStats()).toEqual([
      expect.objectContaining({ totalConnections: 1, idleConnections: 1, activeConnections: 0 }),
    ]);
  });

  it('settles the call with a ConnectionError when the connection breaks, and every call after it', async () => {
    const fake = new FakeConnectionProvider()
      .on('SELECT 0', { rows: [{ zero: 0 }] })
      .on('SELECT 1', { error: connectionLost() });
    const connection = await orThrow(fake.acquire(fakeTarget));
    const batch = await connection.runBatch(['SELECT 0', 'SELECT 1', 'SELECT 2'], options);
    expect(batch.results.map((result) => result.rows)).toEqual([[{ zero: 0 }]]);
    expect(batch.error).toBeInstanceOf(ConnectionError);
    const after = await connection.run('SELECT 2', options);
    expect(after.ok).toBe(false);
    expect(!after.ok && after.error).toBeInstanceOf(ConnectionError);
  });

  it('never answers a hanging statement, not even a cancel; kill ends it', async () => {
    const fake = new FakeConnectionProvider().on('SELECT frozen()', { hang: true });
    const connection = await orThrow(fake.acquire(fakeTarget));
    const running = orThrow(connection.run('SELECT frozen()', options));
    let settled = false;
    void running.then(
      () => (settled = true),
      () => (settled = true),
    );
    await connection.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    fake.connections[0]?.kill();
    await expect(running).rejects.toBeInstanceOf(ConnectionError);
  });

  it('fails the next acquire as scripted, and waits for the abort when told to', async () => {
    const refused = connectionLost('refused', 'ECONNREFUSED');
    const fake = new FakeConnectionProvider()
      .onAcquire({ error: refused })
      .onAcquire({ waitForAbort: true });
    await expect(orThrow(fake.acquire(fakeTarget))).rejects.toBe(refused);
    const controller = new AbortController();
    const waiting = orThrow(fake.acquire(fakeTarget, { signal: controller.signal }));
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ systemCode: 'ABORTED' });
    expect(fake.connections).toEqual([]);
  });

  it('refuses a connection used after release, as a defect', async () => {
    const fake = new FakeConnectionProvider();
    const connection = await orThrow(fake.acquire(fakeTarget));
    connection.release();
    await expect(orThrow(connection.run('SELECT 1', options))).rejects.toThrow(
      'used after release',
    );
  });

  it('gives up a slow acquire when the signal aborts', async () => {
    const fake = new FakeConnectionProvider().onAcquire({ delayMs: 10_000 });
    const controller = new AbortController();
    const waiting = orThrow(fake.acquire(fakeTarget, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 5);
    await expect(waiting).rejects.toMatchObject({ systemCode: 'ABORTED' });
  });
});
