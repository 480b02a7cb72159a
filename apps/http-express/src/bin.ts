#!/usr/bin/env node
/**
 * `sqlgate`: the standalone server, or with `--demo` the same server on an embedded database.
 * SIGTERM / SIGINT stop it gracefully. With WORKERS above 1 this process is the primary of that
 * many workers sharing the port (docs/decisions.md 10.28).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { createServerLogger, flushServerLog } from './server-logger';
import { isLoopbackHostname } from './browser-guard';
import {
  CliArgumentError,
  commandOf,
  USAGE,
  USAGE_EXIT_CODE,
  type CliCommand,
} from './cli-arguments';
import { ConfigError, loadConfig, type ServerConfig } from './config';
import { processRole } from './cluster/process-role';
import { applyServerV8Settings } from './server-v8-settings';

/** What the arguments ask for, or a one-line message and exit 2. */
function commandOrExit(): CliCommand {
  try {
    return commandOf(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof CliArgumentError)) throw error;
    process.stderr.write(`sqlgate: ${error.message}\n`);
    process.exit(USAGE_EXIT_CODE);
  }
}

/** The configuration, or a one-line message and exit 1. */
function configOrExit(): ServerConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`sqlgate: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

function roleOf(config: ServerConfig): ReturnType<typeof processRole> {
  return processRole(config.workers, {
    env: process.env,
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    isClusterPrimary: () => (require('node:cluster') as import('node:cluster').Cluster).isPrimary,
    parentPid: process.ppid,
  });
}

function version(): string {
  const manifest = path.join(__dirname, '..', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Reachable from other machines and free to connect anywhere: said once at start, since nothing
 * else would tell (docs/decisions.md 10.47).
 */
function warnWhenOpen(config: ServerConfig, logger: Logger): void {
  if (config.allowedTargets || isLoopbackHostname(config.hostname)) return;
  logger.warn(
    // HOSTNAME as listenHostname: pino's own `hostname` field names the machine.
    { listenHostname: config.hostname },
    'listening beyond this machine without ALLOWED_TARGETS: any caller that reaches this server can make it connect to any host and port this machine can reach; set ALLOWED_TARGETS, or HOSTNAME=127.0.0.1',
  );
}

/** Starts what the command asks for; resolves with what stops it, or undefined when it is done. */
async function serve(
  command: 'serve' | 'demo',
  config: ServerConfig,
  logger: Logger,
): Promise<{ close(): Promise<void> } | undefined> {
  if (command === 'demo') {
    applyServerV8Settings();
    // Required here: PGlite and everything of the demo load only when asked for.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startDemo, demoBanner } = require('./demo') as typeof import('./demo');
    const demo = await startDemo(config, logger);
    const { host, port, user, database } = demo.database.target;
    logger.info(
      { url: demo.url, embeddedDatabase: `${user}@${host}:${port}/${database}` },
      'sqlgate listening',
    );
    void flushServerLog(); // the banner comes after the lines before it
    process.stdout.write(`${demoBanner(demo)}\n`);
    demo.database.onStopped((reason) => {
      logger.error({ reason }, 'the embedded database stopped');
      void demo.close().finally(() => process.exit(1));
    });
    return demo;
  }
  const role = roleOf(config);
  if (role !== 'worker') warnWhenOpen(config, logger);
  if (role === 'primary') {
    // Required here: the primary serves nothing, and needs neither the server nor its parser.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runPrimary } = require('./cluster/primary') as typeof import('./cluster/primary');
    await runPrimary(config, logger);
    return undefined;
  }
  // Before the parser is first loaded (docs/decisions.md 10.24); the primary never loads it.
  applyServerV8Settings();
  if (role === 'worker') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runWorker } = require('./cluster/worker') as typeof import('./cluster/worker');
    return runWorker(config, logger);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startServer } = require('./server') as typeof import('./server');
  const server = await startServer({ ...config, logger });
  logger.info({ url: server.url }, 'sqlgate listening');
  void flushServerLog();
  return server;
}

async function main(): Promise<void> {
  const command = commandOrExit();
  if (command === 'help' || command === 'version') {
    process.stdout.write(command === 'help' ? USAGE : `${version()}\n`);
    return;
  }
  const config = configOrExit();
  // One logger for the start and stop lines and the request lines: all are pino lines, and
  // LOG_LEVEL silences them alike. A server alone on its output writes them in batches; WORKERS
  // share one output, where only a line written at once stays whole (docs/decisions.md 10.50).
  const logger =
    command === 'demo' || roleOf(config) === 'single'
      ? createServerLogger(config.logLevel)
      : pino({ level: config.logLevel });
  const running = await serve(command, config, logger);
  if (running === undefined) return;
  const stop = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    // The last lines are written before the exit, unless the output takes nothing for a while.
    const exit = (code: number) => () => flushServerLog().then(() => process.exit(code));
    running.close().then(exit(0), exit(1));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`sqlgate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
