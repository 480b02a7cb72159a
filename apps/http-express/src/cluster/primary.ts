/**
 * The primary of WORKERS=n (docs/decisions.md 10.28): it forks the workers, which share the port,
 * and is their IPC hub. It holds no HTTP server and runs no query. SIGTERM / SIGINT stop the
 * workers gracefully (each finishes its requests in flight); it exits once they have, 0 when all
 * stopped cleanly in time.
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config';
import { PRIMARY_PID_VARIABLE } from './process-role';
import { sessionRequestTimeoutMs } from './worker-channel';
import { WorkerSupervisor } from './worker-supervisor';

export async function runPrimary(config: ServerConfig, logger: Logger): Promise<void> {
  const supervisor = new WorkerSupervisor({
    count: config.workers,
    logger,
    workerEnv: { [PRIMARY_PID_VARIABLE]: String(process.pid) },
    sessionRequestTimeoutMs: sessionRequestTimeoutMs(config.sessionMaxLifetimeMs),
  });
  let stopping: Promise<void> | undefined;
  const stop = (signal: string): void => {
    stopping ??= (async () => {
      logger.info({ signal }, 'shutting down');
      const clean = await supervisor.stop();
      process.exit(clean ? 0 : 1);
    })();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  // The workers accept connections themselves, from the socket they share, unless the operator
  // chose otherwise: in node:cluster's round-robin mode the primary holds each connection until a
  // worker has taken it, and one handed to a worker that dies meanwhile hangs for good, where the
  // kernel resets the connections of a dead worker that accepts for itself.
  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) {
    cluster.schedulingPolicy = cluster.SCHED_NONE;
  }
  // Workers run the same command with the same arguments (node:cluster's defaults); the
  // environment tells them they are workers.
  // 'advanced' (structured clone, not JSON): a request body forwarded to another worker keeps
  // every value as its caller sent it (a -0 parameter stays -0, docs/decisions.md 10.35).
  cluster.setupPrimary({ serialization: 'advanced' });
  let url: string;
  try {
    url = await supervisor.start();
  } catch (error) {
    if (stopping) return;
    process.stderr.write(`sqlgate: ${(error as Error).message}\n`);
    await supervisor.stop();
    process.exit(1);
  }
  logger.info({ url, workers: config.workers }, 'sqlgate listening');
}
