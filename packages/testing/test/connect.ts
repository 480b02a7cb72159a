import { Client, type ClientConfig } from 'pg';
import type { TestDatabaseSettings } from '@sqlgate/testing';

/** Opens a client to `settings` with `overrides`, runs `use`, and always closes the client. */
export async function withClient<T>(
  settings: TestDatabaseSettings,
  overrides: ClientConfig,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const client = new Client({
    host: settings.host,
    port: settings.port,
    user: settings.user,
    password: settings.password,
    database: settings.database,
    connectionTimeoutMillis: 10_000,
    ...overrides,
  });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Whether the current connection is encrypted, as the server sees it. */
export async function connectionUsesTls(client: Client): Promise<boolean> {
  const result = await client.query<{ ssl: boolean }>(
    'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
  );
  return result.rows[0]?.ssl === true;
}

/** The SQLSTATE of a failed connection or query. */
export async function sqlStateOf(attempt: Promise<unknown>): Promise<string | undefined> {
  try {
    await attempt;
  } catch (error) {
    return (error as { code?: string }).code;
  }
  throw new Error('expected the attempt to fail');
}
