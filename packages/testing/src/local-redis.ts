/**
 * A throwaway Redis for tests: `redis-server` from PATH on a free port of 127.0.0.1, keeping
 * nothing on disk, in a temporary directory of its own. Tests never touch a shared Redis's data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { untilServing } from './until-serving';
import { mkdtemp, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cleanUpOnExit } from './exit-cleanup';
import { findFreePort } from './free-port';

export interface LocalRedisOptions {
  /** The redis-server program; `redis-server` from PATH when omitted. */
  binary?: string;
  /** Receives progress lines. */
  log?: (line: string) => void;
}

export interface LocalRedis {
  host: string;
  port: number;
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** Kills the server at once (SIGKILL), as a crash would: for fault tests. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (nothing is kept on disk). */
  restart(): Promise<void>;
  /**
   * Suspends the server (SIGSTOP): connections stay open and connecting still succeeds (the
   * kernel accepts), but nothing is answered, as with a Redis stuck on a slow command or a paused
   * VM. For "slow Redis" tests.
   */
  freeze(): Promise<void>;
  /** Resumes a frozen server (SIGCONT); it answers what it was sent meanwhile. */
  thaw(): Promise<void>;
  /** Stops the server and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
/** A port found free can be taken before the server binds it; a few retries cover that race. */
const START_ATTEMPTS = 3;
const STOP_GRACE_MS = 2000;

/**
 * Starts a Redis server that only this test run uses.
 *
 * @example
 * const redis = await startLocalRedis();
 * // ... new Redis(redis.url) ...
 * await redis.stop();
 */
export async function startLocalRedis(options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const binary = options.binary ?? 'redis-server';
  const log = options.log ?? (() => undefined);
  const directory = await mkdtemp(path.join(os.tmpdir(), 'sqlgate-redis-'));
  let child: ChildProcess | undefined;
  let port = 0;
  const forget = cleanUpOnExit(() => {
    child?.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  });

  const launch = async (): Promise<void> => {
    child = spawn(binary, redisArguments(port, directory), { stdio: ['ignore', 'pipe', 'pipe'] });
    await untilServing(child, () => ping(port), {
      name: 'redis-server',
      notReady: 'redis-server did not answer PING',
    });
  };

  try {
    for (let attempt = 1; ; attempt++) {
      port = await findFreePort(HOST);
      try {
        await launch();
        break;
      } catch (error) {
        child?.kill('SIGKILL');
        if (attempt >= START_ATTEMPTS) throw error;
        log(`redis-server did not start on port ${port} (${(error as Error).message}); retrying`);
      }
    }
  } catch (error) {
    forget();
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  log(`redis-server ready on ${HOST}:${port}`);

  let frozen = false;
  const isRunning = (process: ChildProcess | undefined): process is ChildProcess =>
    process !== undefined && process.exitCode === null && process.signalCode === null;
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    if (!isRunning(running)) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(signal);
    // A stopped process keeps a SIGTERM pending until it runs again.
    if (frozen) running.kill('SIGCONT');
    frozen = false;
    const forced = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(forced);
  };
  let stopped: Promise<void> | undefined;
  return {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    kill: () => halt('SIGKILL'),
    freeze: async () => {
      if (!isRunning(child)) throw new Error('redis-server is not running');
      child.kill('SIGSTOP');
      frozen = true;
    },
    thaw: async () => {
      if (!isRunning(child) || !frozen) return;
      child.kill('SIGCONT');
      frozen = false;
    },
    restart: async () => {
      await halt('SIGTERM');
      await launch();
    },
    stop: () =>
      (stopped ??= (async () => {
        await halt('SIGTERM');
        forget();
        await rm(directory, { recursive: true, force: true });
      })()),
  };
}

/** A server on `port` of loopback that keeps nothing on disk and logs only warnings. */
function redisArguments(port: number, directory: string): string[] {
  return [
    ...['--port', String(port), '--bind', HOST],
    ...['--save', '', '--appendonly', 'no', '--dir', directory],
    ...['--daemonize', 'no', '--loglevel', 'warning'],
  ];
}

/** True when a server on `port` answers PING with PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    let reply = '';
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}
