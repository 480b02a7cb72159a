#!/usr/bin/env node
/** `sqlgate`: the standalone server. SIGTERM / SIGINT stop it gracefully. */
import { ConfigError, loadConfig } from './config';
import { startServer } from './server';

async function main(): Promise<void> {
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
  const server = await startServer(config);
  process.stdout.write(
    `${JSON.stringify({ level: 'info', msg: 'sqlgate listening', url: server.url })}\n`,
  );
  const stop = (signal: string): void => {
    process.stdout.write(`${JSON.stringify({ level: 'info', msg: 'shutting down', signal })}\n`);
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
