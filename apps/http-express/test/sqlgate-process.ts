/**
 * sqlgate's built bin as a child process, for tests where the process itself is under test: a
 * crash shows as an exited child with its stderr, not as a dead Jest worker.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const BIN = path.join(__dirname, '..', 'dist', 'bin.js');

/** Output kept from the child: enough for a stack trace, bounded however much it logs. */
const OUTPUT_TAIL_CHARS = 16_384;

/** What became of one HTTP request. */
export type Outcome =
  | { kind: 'response'; status: number; body: unknown; ms: number }
  | { kind: 'not-json'; status: number; text: string; ms: number }
  | { kind: 'transport-error'; message: string; ms: number }
  | { kind: 'no-answer'; ms: number };

export interface SqlgateProcess {
  url: string;
  pid: number;
  alive(): boolean;
  /** How it ended, once it has. */
  exit(): string | undefined;
  /** The end of what it wrote to stderr and stdout. */
  output(): string;
  /** Resolves once it has exited, or after `ms` (a dying child's socket may close before it exits). */
  settle(ms: number): Promise<void>;
  /** Resident set size now, from /proc (undefined where there is no /proc or it has exited). */
  rssBytes(): number | undefined;
  /** Pooled connections lent right now, summed over every pool (GET /api/stats/pools). */
  activeConnections(): Promise<number>;
  /** POSTs JSON; gives up after `deadlineMs` (the outcome is then 'no-answer'). */
  post(route: string, body: unknown, deadlineMs: number): Promise<Outcome>;
  stop(): Promise<void>;
}

/**
 * Starts `dist/bin.js` on 127.0.0.1 and a port the kernel picks; resolves once it listens. `args`
 * are the command's arguments; `replaceEnv` runs it with `env` alone instead of added to this
 * process's environment.
 */
export async function startSqlgateProcess(
  env: Record<string, string>,
  args: readonly string[] = [],
  replaceEnv = false,
): Promise<SqlgateProcess> {
  if (!existsSync(BIN)) {
    throw new Error(
      `${path.relative(process.cwd(), BIN)} is missing: run \`npm run build\` first (\`npm test\` builds before it runs Jest).`,
    );
  }
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...(replaceEnv ? {} : process.env), PORT: '0', HOSTNAME: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let ended: string | undefined;
  const keep = (text: string, chunk: string) => (text + chunk).slice(-OUTPUT_TAIL_CHARS);
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = keep(stderr, chunk)));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let announced = false;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout = keep(stdout, chunk);
      if (announced) return;
      // Whole lines only: the kept tail may start in the middle of one.
      const line = stdout
        .split('\n')
        .slice(0, -1)
        .find((each) => each.startsWith('{') && each.includes('sqlgate listening'));
      if (!line) return;
      announced = true;
      resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then(() => reject(new Error(`sqlgate ${ended} before listening:\n${stderr}`)));
  });
  const pid = child.pid as number;
  return {
    url,
    pid,
    alive: () => ended === undefined,
    exit: () => ended,
    // Quoted line by line, so that a test runner does not take the child's stack for the test's.
    output: () =>
      [`stderr:`, ...quote(stderr), `stdout (end):`, ...quote(stdout.slice(-4096))].join('\n'),
    settle: (ms) =>
      Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]),
    rssBytes: () => rssOf(pid),
    activeConnections: async () => {
      const { stats } = (await (await fetch(`${url}/api/stats/pools`)).json()) as {
        stats: { activeConnections: number }[];
      };
      return stats.reduce((sum, pool) => sum + pool.activeConnections, 0);
    },
    post: (route, body, deadlineMs) => post(`${url}${route}`, body, deadlineMs),
    async stop() {
      if (ended === undefined) child.kill('SIGKILL');
      await exited;
    },
  };
}

const quote = (text: string): string[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `| ${line}`);

function rssOf(pid: number): number | undefined {
  try {
    const kilobytes = /VmRSS:\s*(\d+)\s*kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
  } catch {
    return undefined;
  }
}

async function post(url: string, body: unknown, deadlineMs: number): Promise<Outcome> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deadlineMs),
    });
    text = await response.text();
  } catch (error) {
    if ((error as { name?: string }).name === 'TimeoutError')
      return { kind: 'no-answer', ms: ms() };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const message = `${(error as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`;
    return { kind: 'transport-error', message, ms: ms() };
  }
  try {
    return { kind: 'response', status: response.status, body: JSON.parse(text), ms: ms() };
  } catch {
    return { kind: 'not-json', status: response.status, text: text.slice(0, 500), ms: ms() };
  }
}
