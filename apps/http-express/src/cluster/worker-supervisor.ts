/**
 * The primary's workers as processes (docs/decisions.md 10.28): forks them, connects each to the
 * hub, replaces one that dies (after a backoff), kills one the hub evicts, and stops them all.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { CANCELLED_ANSWER_MS, GRACE_PERIOD_MS } from '../graceful-shutdown';
import { ClusterHub, type WorkerLink } from './cluster-hub';
import { IpcChannel } from './ipc-channel';
import { PRIMARY_REQUESTS, WORKER_NOTICES, WORKER_REQUESTS } from './protocol';
import { RestartBackoff } from './restart-backoff';
import type { ChannelToWorker } from './worker-channel';

/** A killed worker's exit is awaited this long; SIGKILL leaves it no user code to run meanwhile. */
const KILL_WAIT_MS = 1_000;

/** A worker not listening this long after its fork is killed (and, after the start, replaced). */
const STARTUP_TIMEOUT_MS = 30_000;

/**
 * How long workers have to stop after SIGTERM: their own grace period for requests in flight
 * (10 s), the answers of the requests it cancels (6 s at most), then the ends of their pools.
 * Past it they are killed, and what they still serve gets no answer at all.
 */
const SHUTDOWN_TIMEOUT_MS = GRACE_PERIOD_MS + CANCELLED_ANSWER_MS + 4_000;

export interface WorkerSupervisorOptions {
  count: number;
  logger: Logger;
  /** Variables each worker gets on top of the primary's environment. */
  workerEnv: Record<string, string>;
  /** How long a session request forwarded to its worker may run (docs/decisions.md 10.35). */
  sessionRequestTimeoutMs: number;
  backoff?: RestartBackoff;
}

interface RunningWorker {
  worker: Worker;
  link: WorkerLink;
  forkedAt: number;
  listening: boolean;
  exitCode: number | null | undefined;
  exited: Promise<void>;
  startupTimer: NodeJS.Timeout;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class WorkerSupervisor {
  private readonly running = new Map<WorkerLink, RunningWorker>();
  private readonly hub: ClusterHub;
  private readonly backoff: RestartBackoff;
  private readonly replacements = new Set<NodeJS.Timeout>();
  private stopping = false;
  /** Settles start(): pending until every first worker listens, or one of them dies. */
  private starting: { resolve(url: string): void; reject(error: Error): void } | undefined;

  constructor(private readonly options: WorkerSupervisorOptions) {
    this.backoff = options.backoff ?? new RestartBackoff();
    this.hub = new ClusterHub({
      logger: options.logger,
      sessionRequestTimeoutMs: options.sessionRequestTimeoutMs,
      evict: (link) => this.evict(link),
      listening: (link, url) => this.listening(link, url),
    });
  }

  /**
   * Forks the workers; resolves with the URL once all listen. A worker that dies before listening
   * fails the start (a port in use, a broken installation): replacing it would only repeat that.
   */
  start(): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      this.starting = { resolve, reject };
      for (let index = 0; index < this.options.count; index += 1) this.fork();
    });
  }

  /**
   * Sends every worker SIGTERM (each finishes its requests in flight, as a single server does) and
   * resolves once all have exited: true when all did, with code 0, within SHUTDOWN_TIMEOUT_MS;
   * false when some had to be killed or failed.
   */
  async stop(): Promise<boolean> {
    this.stopping = true;
    for (const timer of this.replacements) clearTimeout(timer);
    this.replacements.clear();
    this.starting?.reject(new Error('stopped before every worker listened'));
    this.starting = undefined;
    const workers = Array.from(this.running.values());
    for (const each of workers) {
      clearTimeout(each.startupTimer);
      // Not worker.kill(): that closes the IPC channel first, and a worker finishing its requests
      // must still take relayed invalidations.
      each.worker.process.kill('SIGTERM');
    }
    const allExited = Promise.all(workers.map((each) => each.exited)).then(() => true);
    const inTime = await Promise.race([allExited, sleep(SHUTDOWN_TIMEOUT_MS).then(() => false)]);
    if (!inTime) {
      this.options.logger.error('workers did not stop in time; killing them');
      for (const each of this.running.values()) each.worker.process.kill('SIGKILL');
      await Promise.race([allExited, sleep(KILL_WAIT_MS)]);
    }
    return inTime && workers.every((each) => each.exitCode === 0);
  }

  /** Kills a worker and resolves once it has exited, or after KILL_WAIT_MS. */
  async evict(link: WorkerLink): Promise<void> {
    const running = this.running.get(link);
    if (running === undefined) return;
    running.worker.process.kill('SIGKILL');
    await Promise.race([running.exited, sleep(KILL_WAIT_MS)]);
  }

  private fork(): void {
    const worker = cluster.fork(this.options.workerEnv);
    const pid = worker.process.pid ?? 0;
    // The hub's handlers only close over the link: it is complete before any message arrives.
    const link = { pid } as { pid: number; channel: ChannelToWorker };
    link.channel = new IpcChannel({
      send: (message, done) => worker.send(message, done),
      outgoing: PRIMARY_REQUESTS,
      incoming: WORKER_REQUESTS,
      incomingNotices: WORKER_NOTICES,
      handlers: this.hub.handlersFor(link),
      noticeHandlers: this.hub.noticeHandlersFor(link),
      onMalformed: (reason) =>
        this.options.logger.warn({ workerPid: pid, reason }, 'malformed message from a worker'),
    });
    const { channel } = link;
    // Listened to at once: the worker's first message may come before the next turn of the loop.
    worker.on('message', (message: unknown) => channel.receive(message));
    const running: RunningWorker = {
      worker,
      link,
      forkedAt: performance.now(),
      listening: false,
      exitCode: undefined,
      exited: new Promise<void>((resolve) =>
        worker.once('exit', (code: number | null, signal: string | null) => {
          running.exitCode = code;
          this.exited(running, code, signal);
          resolve();
        }),
      ),
      startupTimer: setTimeout(() => {
        this.options.logger.error(
          { workerPid: pid },
          `worker not listening after ${STARTUP_TIMEOUT_MS} ms; killing it`,
        );
        worker.process.kill('SIGKILL');
      }, STARTUP_TIMEOUT_MS),
    };
    running.startupTimer.unref();
    this.running.set(link, running);
    worker.on('disconnect', () => this.disconnected(running));
    // An error of the channel (a send to a dying worker) is the exit's business, not a crash.
    worker.on('error', (error: Error) =>
      this.options.logger.warn({ workerPid: pid, err: error }, 'worker channel error'),
    );
  }

  private listening(link: WorkerLink, url: string): void {
    const running = this.running.get(link);
    if (running === undefined || running.listening) return;
    running.listening = true;
    clearTimeout(running.startupTimer);
    if (this.starting === undefined) {
      this.options.logger.info({ workerPid: link.pid }, 'worker replaced');
      return;
    }
    const listening = Array.from(this.running.values()).filter((each) => each.listening).length;
    if (listening === this.options.count) {
      this.starting.resolve(url);
      this.starting = undefined;
    }
  }

  /** The IPC channel closed: a worker that lives on could not take relays, so it must not serve. */
  private disconnected(running: RunningWorker): void {
    this.hub.leave(running.link);
    running.link.channel.close(`worker ${running.link.pid} disconnected`);
    const { exitCode, signalCode } = running.worker.process;
    if (!this.stopping && exitCode === null && signalCode === null) {
      running.worker.process.kill('SIGKILL');
    }
  }

  private exited(running: RunningWorker, code: number | null, signal: string | null): void {
    clearTimeout(running.startupTimer);
    this.hub.leave(running.link);
    running.link.channel.close(`worker ${running.link.pid} exited`);
    this.running.delete(running.link);
    if (this.stopping) return;
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (this.starting !== undefined) {
      this.starting.reject(new Error(`worker ${running.link.pid} ${how} before listening`));
      this.starting = undefined;
      return;
    }
    const delayMs = this.backoff.delayAfter(performance.now() - running.forkedAt);
    this.options.logger.error(
      { workerPid: running.link.pid, code, signal, restartInMs: delayMs },
      `worker ${how}; replacing it`,
    );
    // A write it committed may not have been relayed before it died.
    void this.hub.forgetEverywhere();
    const timer = setTimeout(() => {
      this.replacements.delete(timer);
      if (!this.stopping) this.fork();
    }, delayMs);
    this.replacements.add(timer);
  }
}
