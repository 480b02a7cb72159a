/**
 * The embedded database's thread (docs/decisions.md 10.47): PGlite, in memory, behind the bridge
 * that serves it on a loopback port. A statement runs inside PGlite synchronously, so it runs here,
 * never on the thread that answers HTTP. Tells its parent the port once it listens, or why it
 * could not start, or that the database stopped.
 */
import { parentPort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { isCopyFromStdin, loadParser, parseSql } from '@sqlgate/core';
import { PgliteBridge } from './pglite-bridge';
import type { EmbeddedDatabaseNews } from './embedded-database';

function tell(news: EmbeddedDatabaseNews): void {
  parentPort?.postMessage(news);
}

/** Where a Query's text has a COPY ... FROM STDIN, by sqlgate's own reading of SQL. */
function copyFromStdinIn(sql: string): 'none' | 'alone' | 'among-others' {
  let statements;
  try {
    statements = parseSql(sql);
  } catch {
    return 'none'; // text the backend will refuse with its own error
  }
  if (!statements.some(isCopyFromStdin)) return 'none';
  return statements.length === 1 ? 'alone' : 'among-others';
}

async function start(): Promise<void> {
  // Nothing on disk: PGlite's files live in this thread's memory and go with it.
  const [database] = await Promise.all([PGlite.create('memory://'), loadParser()]);
  const run = async (messages: Uint8Array): Promise<Uint8Array> => {
    try {
      return await database.execProtocolRaw(messages);
    } catch (error) {
      // PGlite answers a statement's failure in the protocol; a throw means it stopped.
      tell({ kind: 'stopped', message: (error as Error).message });
      throw error;
    }
  };
  const bridge = new PgliteBridge({ run, copyFromStdinIn });
  const port = await bridge.listen();
  const { rows } = await database.query<{ version: string }>(
    "SELECT current_setting('server_version') AS version",
  );
  tell({ kind: 'listening', port, serverVersion: rows[0]?.version ?? 'unknown' });
}

start().catch((error: unknown) => {
  tell({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
});
