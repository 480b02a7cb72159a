/**
 * The embedded database's thread (docs/decisions.md 10.47): PGlite, in memory. A statement runs
 * inside PGlite synchronously, so it runs here, never on the thread that answers HTTP and serves
 * the database's port (the bridge), which stays free to answer while a statement runs. Takes
 * protocol messages from its parent one request at a time and answers each with PGlite's reply;
 * tells its parent once it is ready, or why it could not start, or that the database stopped.
 */
import { parentPort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { EmbeddedDatabaseNews, ProtocolRequest } from './embedded-database';

function tell(news: EmbeddedDatabaseNews): void {
  parentPort?.postMessage(news);
}

async function start(): Promise<void> {
  // Nothing on disk: PGlite's files live in this thread's memory and go with it.
  const database = await PGlite.create('memory://');
  // Messages are handled one after another: each waits for the one before it.
  let previous: Promise<void> = Promise.resolve();
  parentPort?.on('message', ({ id, messages }: ProtocolRequest) => {
    previous = previous.then(async () => {
      try {
        tell({ kind: 'answer', id, answer: await database.execProtocolRaw(messages) });
      } catch (error) {
        // PGlite answers a statement's failure in the protocol; a throw means it stopped.
        const message = error instanceof Error ? error.message : String(error);
        tell({ kind: 'stopped', message });
        tell({ kind: 'answer', id, error: message });
      }
    });
  });
  const { rows } = await database.query<{ version: string }>(
    "SELECT current_setting('server_version') AS version",
  );
  tell({ kind: 'ready', serverVersion: rows[0]?.version ?? 'unknown' });
}

start().catch((error: unknown) => {
  tell({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
});
