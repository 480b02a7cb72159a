/**
 * The demo's embedded PostgreSQL (docs/decisions.md 10.47): PGlite in a thread of this process,
 * served on a loopback port the kernel picks. It lives in memory only: nothing is written to
 * disk, and it ends with the process, however the process ends.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ConnectionTarget } from '@sqlgate/core';

/** What the database's thread tells this one. */
export type EmbeddedDatabaseNews =
  | { kind: 'listening'; port: number; serverVersion: string }
  | { kind: 'failed'; message: string }
  | { kind: 'stopped'; message: string };

export interface EmbeddedDatabase {
  /** Where it answers: PGlite has one user and one database, and asks for no password. */
  target: ConnectionTarget;
  serverVersion: string;
  /** Called at most once, if the database stops by itself. */
  onStopped(listener: (reason: string) => void): void;
  stop(): Promise<void>;
}

const PGLITE_PACKAGE = '@electric-sql/pglite';

export function startEmbeddedDatabase(): Promise<EmbeddedDatabase> {
  const worker = new Worker(path.join(__dirname, 'embedded-database-worker.js'));
  let stopping = false;
  let stoppedListener: ((reason: string) => void) | undefined;
  const stoppedByItself = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    stoppedListener?.(reason);
  };
  return new Promise((resolve, reject) => {
    worker.on('message', (news: EmbeddedDatabaseNews) => {
      if (news.kind === 'listening') {
        resolve({
          target: {
            host: '127.0.0.1',
            port: news.port,
            user: 'postgres',
            database: 'postgres',
            sslMode: 'disable',
          },
          serverVersion: news.serverVersion,
          onStopped: (listener) => (stoppedListener = listener),
          stop: async () => {
            stopping = true;
            await worker.terminate();
          },
        });
      } else if (news.kind === 'failed') {
        stopping = true;
        void worker.terminate();
        reject(new Error(`the embedded database did not start: ${news.message}`));
      } else stoppedByItself(news.message);
    });
    worker.on('error', (error: Error & { code?: string }) => {
      stoppedByItself(error.message);
      reject(
        error.code === 'MODULE_NOT_FOUND' && error.message.includes(PGLITE_PACKAGE)
          ? new Error(
              `--demo needs ${PGLITE_PACKAGE}, an optional dependency of @sqlgate/http-express that is not installed: npm install ${PGLITE_PACKAGE}`,
            )
          : error,
      );
    });
    worker.on('exit', (code) => {
      stoppedByItself(`its thread exited with code ${code}`);
      reject(new Error(`the embedded database's thread exited with code ${code}`));
    });
  });
}
