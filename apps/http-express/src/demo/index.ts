/**
 * `sqlgate --demo` (docs/decisions.md 10.47): sqlgate on 127.0.0.1 in front of an embedded
 * PostgreSQL, so that it can be tried with nothing but Node. A request that names no target runs
 * on the embedded database, the console's form opens on it, and no other database can be reached.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../config';
import { startServer, type RunningServer } from '../server';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded-database';

/** Only this machine reaches a demo, whatever HOSTNAME says. */
const DEMO_HOSTNAME = '127.0.0.1';

/** The settings a demo decides itself, by the variable that would set them otherwise. */
const DECIDED_BY_THE_DEMO: Record<string, string> = {
  HOSTNAME: DEMO_HOSTNAME,
  ALLOWED_TARGETS: 'the embedded database only',
  // PGlite is one backend: a second connection would share its session (10.47).
  POOL_MAX: '1',
  WORKERS: '1',
};

export interface RunningDemo extends RunningServer {
  database: EmbeddedDatabase;
}

/** Starts the embedded database, then sqlgate on it; `onStopped` hears if the database dies. */
export async function startDemo(
  config: ServerConfig,
  logger: Logger,
  env: Record<string, string | undefined> = process.env,
): Promise<RunningDemo> {
  const ignored = Object.keys(DECIDED_BY_THE_DEMO).filter(
    (name) => env[name] && env[name] !== DECIDED_BY_THE_DEMO[name],
  );
  if (ignored.length > 0) {
    logger.warn(
      {
        ignored: Object.fromEntries(
          ignored.map((name) => [name, { set: env[name], used: DECIDED_BY_THE_DEMO[name] }]),
        ),
      },
      'the demo decides these settings itself',
    );
  }
  const database = await startEmbeddedDatabase();
  const { target } = database;
  let server: RunningServer;
  try {
    server = await startServer({
      ...config,
      hostname: DEMO_HOSTNAME,
      allowedTargets: `${target.host}:${target.port}`,
      poolMax: 1,
      workers: 1,
      logger,
      configuredTargets: { default: target },
    });
  } catch (error) {
    await database.stop();
    throw error;
  }
  const close = async (): Promise<void> => {
    await server.close();
    await database.stop();
  };
  return { ...server, database, close, [Symbol.asyncDispose]: close };
}

/** What a person reads once the demo runs: where to look, what to type. */
export function demoBanner(demo: RunningDemo): string {
  const { url, database } = demo;
  const { host, port, user } = database.target;
  const address = `${new URL(url).host}`;
  return [
    '',
    `sqlgate demo: PostgreSQL ${database.serverVersion} embedded in this process (PGlite), in memory;`,
    '  everything in it is gone when sqlgate stops.',
    '',
    `  Console:  ${url}/`,
    `  Try:      curl -s ${address}/api/query -H 'content-type: application/json' -d '{"sql":"SELECT 1"}'`,
    '',
    `  Requests without host, port, user and database run on it (${host}:${port}, user ${user},`,
    '  database postgres); no other database is reachable in this mode. Ctrl-C stops it.',
    '',
  ].join('\n');
}
