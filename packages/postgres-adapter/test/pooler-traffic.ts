/**
 * Other clients' traffic through a pooler, for tests of what sqlgate concludes about it: client
 * connections of their own that run short transactions of several round trips and single
 * statements, with idle gaps in between, until stopped.
 */
import { Client } from 'pg';
import type { ConnectionTarget } from '@sqlgate/core';

export interface PoolerTraffic {
  /** Round trips answered so far, over every client: traffic that did not flow proves nothing. */
  readonly answered: number;
  /** Stops every client and waits for them to end; rejects with the first failure any met. */
  stop(): Promise<void>;
}

/**
 * `clients` connections to `target`, each alternating at random between a transaction and a lone
 * statement; lone statements only with `transactions: false` (a statement pooler refuses BEGIN).
 */
export async function startPoolerTraffic(
  target: ConnectionTarget,
  clients: number,
  { transactions = true } = {},
): Promise<PoolerTraffic> {
  let running = true;
  let answered = 0;
  const failures: unknown[] = [];
  const connected = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new Client({
        host: target.host,
        port: target.port,
        user: target.user,
        password: target.password,
        database: target.database,
        ssl: false,
      });
      client.on('error', (error) => failures.push(error));
      await client.connect();
      return client;
    }),
  );
  const roundTrip = async (client: Client, sql: string): Promise<void> => {
    await client.query(sql);
    answered += 1;
  };
  const loop = async (client: Client): Promise<void> => {
    try {
      while (running) {
        if (transactions && Math.random() < 0.5) {
          // A transaction keeps its backend across round trips, idle in between.
          await roundTrip(client, 'BEGIN');
          await roundTrip(client, 'SELECT pg_backend_pid()');
          await pause(Math.random() * 2);
          await roundTrip(client, 'COMMIT');
        } else {
          await roundTrip(client, 'SELECT 1');
        }
        await pause(Math.random() * 3);
      }
    } catch (error) {
      failures.push(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const loops = connected.map(loop);
  return {
    get answered() {
      return answered;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      if (failures.length > 0) throw failures[0];
    },
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
