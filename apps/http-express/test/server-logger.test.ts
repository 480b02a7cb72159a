/**
 * The server's batched log output (docs/decisions.md 10.50): every line reaches standard output,
 * the last ones too when the bin stops on SIGTERM, and an output that does not keep up loses lines
 * it counts and reports instead of growing the heap.
 */
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import pino from 'pino';
import { BatchedLogOutput } from '../src/server-logger';
import { eventually } from '@sqlgate/testing';
import { target } from './support';

const dist = path.join(__dirname, '..', 'dist');

interface LogLine {
  msg?: string;
  level?: number;
  path?: string;
  reqId?: string;
  droppedLines?: number;
  i?: number;
}

const linesOf = (output: string): LogLine[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

it('writes every request line before the bin exits on SIGTERM', async () => {
  const child = spawn(process.execPath, [path.join(dist, 'bin.js')], {
    env: { ...process.env, PORT: '0', HOSTNAME: '127.0.0.1', LOG_LEVEL: 'info' },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const listening = (): void => {
      const line = linesOf(output).find((each) => each.msg === 'sqlgate listening');
      if (line) resolve((line as { url: string }).url);
    };
    child.stdout.on('data', listening);
    void exited.then(() => reject(new Error(`sqlgate exited before listening: ${output}`)));
  });
  const body = JSON.stringify(target({ sql: 'SELECT 1 AS one' }));
  const ids = Array.from({ length: 40 }, (_, index) => `logged-${index}`);
  for (const id of ids) {
    const response = await fetch(`${url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': id },
      body,
    });
    expect(response.status).toBe(200);
  }
  // At once: the lines of the last requests still wait in the batch.
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  const logged = linesOf(output)
    .filter((line) => line.path === '/api/query')
    .map((line) => line.reqId);
  expect(logged).toEqual(ids);
  expect(linesOf(output).at(-1)?.msg).toBe('shutting down');
}, 60_000);

it('stops on SIGTERM within its bounds while nobody reads its output', async () => {
  const child = spawn(process.execPath, [path.join(dist, 'bin.js')], {
    env: { ...process.env, PORT: '0', HOSTNAME: '127.0.0.1', LOG_LEVEL: 'info' },
  });
  // The listening line is read; after it nothing is, and the pipe fills.
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const listening = (chunk: Buffer): void => {
      output += String(chunk);
      const line = linesOf(output).find((each) => each.msg === 'sqlgate listening');
      if (!line) return;
      child.stdout.off('data', listening);
      child.stdout.pause();
      resolve((line as { url: string }).url);
    };
    child.stdout.on('data', listening);
    child.once('exit', () => reject(new Error(`sqlgate exited before listening: ${output}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // Long paths make long lines (each a 404): far more than a pipe and its reader's buffer hold.
  const longPath = `/${'x'.repeat(7000)}`;
  for (let request = 0; request < 200; request++) {
    const response = await fetch(`${url}${longPath}`);
    expect(response.status).toBe(404);
  }
  // Still answering while its output takes nothing.
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  // The shutdown waits for the output at most 2 s (decision 10.50): it ends, and well within
  // this test's time, where a write waiting for the reader would hold it for ever.
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
}, 60_000);

/**
 * An output that takes what it is handed only when told to: what it has not taken is its
 * `writableLength`, as for standard output whose reader is slow.
 */
class SlowOutput extends EventEmitter {
  readonly taken: string[] = [];
  private held: string[] = [];

  get writableLength(): number {
    return this.held.reduce((sum, batch) => sum + batch.length, 0);
  }

  write(batch: string): boolean {
    this.held.push(batch);
    return false;
  }

  takeAll(): void {
    this.taken.push(...this.held);
    this.held = [];
    this.emit('drain');
  }
}

it('drops lines an output does not take in time, and reports how many', async () => {
  const output = new SlowOutput();
  const batched = new BatchedLogOutput(output, 64 * 1024);
  const logger = pino({}, batched);
  for (let i = 0; i < 20_000; i++) logger.info({ i }, 'line');
  // Past 64 KiB waiting, every line was dropped. Once the output takes what it holds, the report
  // of the drops follows (a second after the first drop).
  const reported = (): boolean => {
    output.takeAll();
    return linesOf(output.taken.join('')).some((line) => line.droppedLines !== undefined);
  };
  await eventually(reported);
  const lines = linesOf(output.taken.join(''));
  const written = lines.filter((line) => line.msg === 'line');
  const reports = lines.filter((line) => line.droppedLines !== undefined);
  expect(written.length).toBeGreaterThan(0);
  expect(written.length).toBeLessThan(20_000);
  // The lines kept are the first ones, in order, each whole.
  expect(written.map((line) => line.i)).toEqual(written.map((_, index) => index));
  expect(reports).toHaveLength(1);
  expect(reports[0]?.level).toBe(40);
  expect(written.length + (reports[0]?.droppedLines ?? 0)).toBe(20_000);
});
