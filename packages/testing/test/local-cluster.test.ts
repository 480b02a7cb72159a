import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import {
  startLocalCluster,
  testDatabaseFromEnvironment,
  type LocalCluster,
} from '@sqlgate/testing';
import { Client } from 'pg';
import { connectionUsesTls, withClient } from './connect';

/** Sends PostgreSQL's SSLRequest on a fresh connection and returns the server's one-byte answer. */
function answerToSslRequest(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => {
      const request = Buffer.alloc(8);
      request.writeInt32BE(8, 0);
      request.writeInt32BE(80877103, 4);
      socket.write(request);
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer to the SSLRequest')));
    socket.once('data', (chunk: Buffer) => {
      socket.destroy();
      resolve(chunk.toString('latin1'));
    });
    socket.once('error', reject);
  });
}

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

    it('answers an SSLRequest with N', async () => {
      expect(await answerToSslRequest(cluster.host, cluster.port)).toBe('N');
    });

    it('accepts a connection string with sslmode=disable', async () => {
      const client = new Client({
        connectionString: `${cluster.connectionString}?sslmode=disable`,
        connectionTimeoutMillis: 10_000,
      });
      await client.connect();
      try {
        expect(await connectionUsesTls(client)).toBe(false);
        const result = await client.query<{ one: number }>('SELECT 1 AS one');
        expect(result.rows).toEqual([{ one: 1 }]);
      } finally {
        await client.end();
      }
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
