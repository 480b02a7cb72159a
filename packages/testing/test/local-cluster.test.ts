import { existsSync } from 'node:fs';
import {
  startLocalCluster,
  testDatabaseFromEnvironment,
  type LocalCluster,
} from '@sqlgate/testing';
import { connectionUsesTls, withClient } from './connect';

// Starting a cluster takes about a second, more when the machine is busy with other test files.
jest.setTimeout(60_000);

const { source } = testDatabaseFromEnvironment();

// The run's database coming from elsewhere means the local server programs may be missing.
const describeLocal =
  source === 'local-cluster'
    ? describe
    : (title: string, body: () => void) =>
        describe.skip(
          `${title} (skipped: the run's database came from ${source}, not a local cluster)`,
          body,
        );

describeLocal('startLocalCluster', () => {
  describe('without TLS', () => {
    let cluster: LocalCluster;
    beforeAll(async () => {
      cluster = await startLocalCluster({ tls: false });
    });
    afterAll(() => cluster?.stop());

    it('reports no TLS and no CA certificate', () => {
      expect(cluster.tls).toBe(false);
      expect(cluster.caCertificate).toBeUndefined();
    });

    it('rejects an SSL connection attempt', async () => {
      await expect(
        withClient(cluster, { ssl: { rejectUnauthorized: false } }, async () => 0),
      ).rejects.toThrow(/does not support SSL/);
    });

    it('accepts a plain connection with the password', async () => {
      const encrypted = await withClient(cluster, { ssl: false }, (client) =>
        connectionUsesTls(client),
      );
      expect(encrypted).toBe(false);
    });
  });

  describe('restart and stop', () => {
    let cluster: LocalCluster;
    beforeAll(async () => {
      cluster = await startLocalCluster();
    });
    afterAll(() => cluster?.stop());

    it('keeps data and the port across restart()', async () => {
      await withClient(cluster, { ssl: false }, async (client) => {
        await client.query('CREATE TABLE kept (value text)');
        await client.query("INSERT INTO kept VALUES ('survives')");
      });
      const port = cluster.port;

      await cluster.restart();

      expect(cluster.port).toBe(port);
      const rows = await withClient(cluster, { ssl: { rejectUnauthorized: false } }, (client) =>
        client.query<{ value: string }>('SELECT value FROM kept'),
      );
      expect(rows.rows).toEqual([{ value: 'survives' }]);
    });

    it('deletes its directory on stop(), and a second stop() is harmless', async () => {
      expect(existsSync(cluster.dataDirectory)).toBe(true);

      await cluster.stop();

      expect(existsSync(cluster.directory)).toBe(false);
      await expect(cluster.stop()).resolves.toBeUndefined();
      await expect(withClient(cluster, { ssl: false }, async () => 0)).rejects.toThrow(
        /ECONNREFUSED/,
      );
    });
  });
});
