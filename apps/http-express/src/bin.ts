#!/usr/bin/env node
/**
 * `sqlgate`: the standalone server. SIGTERM / SIGINT stop it gracefully. With WORKERS above 1 this
 * process is the primary of that many workers sharing the port (docs/decisions.md 10.28).
 */
import pino from 'pino';
import { ConfigError, loadConfig, type ServerConfig } from './config';
import { processRole } from './cluster/process-role';
import { applyServerV8Settings } from './server-v8-settings';

/** The configuration, or a one-line message and exit 1. */
function configOrExit(): { config: ServerConfig; role: ReturnType<typeof processRole> } {
  try {
    const config = loadConfig();
    const role = processRole(config.workers, {
      env: process.env,
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      isClusterPrimary: () => (require('node:cluster') as import('node:cluster').Cluster).isPrimary,
      parentPid: process.ppid,
    });
    return { config, role };
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`sqlgate: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const { config, role } = configOrExit();
  // One logger for the start and stop lines and the request lines: all are pino lines, and
  // LOG_LEVEL silences them alike.
  const logger = pino({ level: config.logLevel });
  if (role === 'primary') {
    // Required here: the primary serves nothing, and needs neither the server nor its parser.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runPrimary } = require('./cluster/primary') as typeof import('./cluster/primary');
    await runPrimary(config, logger);
    return;
  }
  // Before the parser is first loaded (docs/decisions.md 10.24); the primary never loads it.
  applyServerV8Settings();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startServer } = require('./server') as typeof import('./server');
  let server;
  if (role === 'worker') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runWorker } = require('./cluster/worker') as typeof import('./cluster/worker');
    server = await runWorker(config, logger);
  } else {
    server = await startServer({ ...config, logger });
    logger.info({ url: server.url }, 'sqlgate listening');
  }
  const stop = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`sqlgate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
