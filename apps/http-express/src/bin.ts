#!/usr/bin/env node
/** `sqlgate`: the standalone server. SIGTERM / SIGINT stop it gracefully. */
import pino from 'pino';
import { ConfigError, loadConfig } from './config';
import { applyServerV8Settings } from './server-v8-settings';
import { startServer } from './server';

async function main(): Promise<void> {
  applyServerV8Settings();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`sqlgate: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // One logger for the start and stop lines and the request lines: all are pino lines, and
  // LOG_LEVEL silences them alike.
  const logger = pino({ level: config.logLevel });
  const server = await startServer({ ...config, logger });
  logger.info({ url: server.url }, 'sqlgate listening');
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
