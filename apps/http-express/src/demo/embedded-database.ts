/**
 * The demo's embedded PostgreSQL (docs/decisions.md 10.47): PGlite in a thread of this process,
 * served by the bridge on this thread on a loopback port the kernel picks. It lives in memory only: nothing is written to
 * disk, and it ends with the process, however the process ends.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { isCopyFromStdin, loadParser, parseSql, type ConnectionTarget } from '@sqlgate/core';
import { PgliteBridge } from './pglite-bridge';

/** What the database's thread tells this one. */
export type EmbeddedDatabaseNews =
  | { kind: 'ready'; serverVersion: string }
  | { kind: 'answer'; id: number; answer?: Uint8Array; error?: string }
  | { kind: 'failed'; message: string }
  | { kind: 'stopped'; message: string };

/** Protocol messages for PGlite, sent to the database's thread. */
export interface ProtocolRequest {
  id: number;
  messages: Uint8Array;
}

export interface EmbeddedDatabase {
  /** Where it answers: PGlite has one user and one database, and asks for no password. */
  target: ConnectionTarget;
  serverVersion: string;
  /** Called at most once, if the database stops by itself. */
  onStopped(listener: (reason: string) => void): void;
  stop(): Promise<void>;
}

const PGLITE_PACKAGE = '@electric-sql/pglite';

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

/** PGlite in its thread, answering protocol messages in the order they were sent. */
class DatabaseThread {
  private readonly worker = new Worker(path.join(__dirname, 'embedded-database-worker.js'));
  private readonly waiting = new Map<
    number,
    (news: { answer?: Uint8Array; error?: string }) => void
  >();
  private lastId = 0;

  constructor(onNews: (news: EmbeddedDatabaseNews) => void, onError: (error: Error) => void) {
    this.worker.on('message', (news: EmbeddedDatabaseNews) => {
      if (news.kind !== 'answer') return onNews(news);
      this.waiting.get(news.id)?.(news);
      this.waiting.delete(news.id);
    });
    this.worker.on('error', onError);
    this.worker.on('exit', (code) => {
      const reason = `its thread exited with code ${code}`;
      this.waiting.forEach((settle) => settle({ error: reason }));
      this.waiting.clear();
      onError(new Error(`the embedded database's thread exited with code ${code}`));
    });
  }

  run(messages: Uint8Array): Promise<Uint8Array> {
    const id = ++this.lastId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, ({ answer, error }) =>
        answer ? resolve(answer) : reject(new Error(error ?? 'no answer')),
      );
      this.worker.postMessage({ id, messages } satisfies ProtocolRequest);
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * Starts PGlite in a thread and the bridge that serves it on this thread: a statement blocks the
 * database's thread while it runs, and the bridge must still answer logins meanwhile.
 */
export async function startEmbeddedDatabase(): Promise<EmbeddedDatabase> {
  let stopping = false;
  let stoppedListener: ((reason: string) => void) | undefined;
  const stoppedByItself = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    stoppedListener?.(reason);
  };
  await loadParser();
  let thread: DatabaseThread | undefined;
  const serverVersion = await new Promise<string>((resolve, reject) => {
    thread = new DatabaseThread(
      (news) => {
        if (news.kind === 'ready') resolve(news.serverVersion);
        else if (news.kind === 'failed') {
          stopping = true;
          void thread?.terminate();
          reject(new Error(`the embedded database did not start: ${news.message}`));
        } else if (news.kind === 'stopped') stoppedByItself(news.message);
      },
      (error: Error & { code?: string }) => {
        stoppedByItself(error.message);
        reject(
          error.code === 'MODULE_NOT_FOUND' && error.message.includes(PGLITE_PACKAGE)
            ? new Error(
                `--demo needs ${PGLITE_PACKAGE}, an optional dependency of @sqlgate/http-express that is not installed: npm install ${PGLITE_PACKAGE}`,
              )
            : error,
        );
      },
    );
  });
  const database = thread as DatabaseThread;
  const bridge = new PgliteBridge({ run: (messages) => database.run(messages), copyFromStdinIn });
  let port: number;
  try {
    port = await bridge.listen();
  } catch (error) {
    stopping = true;
    await database.terminate();
    throw error;
  }
  return {
    target: { host: '127.0.0.1', port, user: 'postgres', database: 'postgres', sslMode: 'disable' },
    serverVersion,
    onStopped: (listener) => (stoppedListener = listener),
    stop: async () => {
      stopping = true;
      await bridge.close();
      await database.terminate();
    },
  };
}
