import { Client } from 'pg';
import { eventually, startLocalCluster, startLocalReplica } from '@sqlgate/testing';

async function firstValue(connectionString: string, sql: string): Promise<unknown> {
  const client = new Client({ connectionString, ssl: false });
  await client.connect();
  try {
    const { rows } = await client.query({ text: sql, rowMode: 'array' });
    return (rows[0] as unknown[] | undefined)?.[0];
  } finally {
    await client.end();
  }
}

test('a local replica streams from its primary, pauses its replay, and comes back after a stop', async () => {
  await using primary = await startLocalCluster({ tls: false, replication: true });
  await using replica = await startLocalReplica(primary);
  expect(await firstValue(replica.connectionString, 'SELECT pg_is_in_recovery()')).toBe(true);
  await firstValue(primary.connectionString, 'CREATE TABLE seen (n int)');
  await eventually(async () => {
    await firstValue(replica.connectionString, 'SELECT count(*) FROM seen');
  });
  await replica.pauseReplay();
  await firstValue(primary.connectionString, 'INSERT INTO seen VALUES (1) RETURNING n');
  expect(await firstValue(replica.connectionString, 'SELECT count(*)::int FROM seen')).toBe(0);
  await replica.resumeReplay();
  await eventually(async () => {
    expect(await firstValue(replica.connectionString, 'SELECT count(*)::int FROM seen')).toBe(1);
  });
  await replica.stop();
  await expect(firstValue(replica.connectionString, 'SELECT 1')).rejects.toThrow();
  await replica.start();
  expect(await firstValue(replica.connectionString, 'SELECT pg_is_in_recovery()')).toBe(true);
}, 120_000);
