/**
 * The `sqlgate` command's arguments and its start-up warning, on the built bin as a child process:
 * `--help` and `--version` answer and exit without serving, an unknown argument stops the command
 * (a mistyped option must not start an open server), and a server reachable from other machines
 * without ALLOWED_TARGETS says what that means.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, startSqlgateProcess } from './sqlgate-process';

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A bin that serves instead of answering is killed after this long, and the test fails. */
const RUN_LIMIT_MS = 15_000;
jest.setTimeout(RUN_LIMIT_MS + 15_000);

/** Runs the bin with `args` to its end; a bin still running after RUN_LIMIT_MS is killed. */
function runBin(args: string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, PORT: '0', HOSTNAME: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const VERSION = (
  JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

describe('sqlgate arguments', () => {
  it.each([[['--help']], [['-h']], [['--demo', '--help']]])(
    '%j prints the usage, options and main variables, and exits 0 without serving',
    async (args) => {
      const ran = await runBin(args);
      expect({ code: ran.code, signal: ran.signal, stderr: ran.stderr }).toEqual({
        code: 0,
        signal: null,
        stderr: '',
      });
      expect(ran.stdout).toMatch(/^Usage: sqlgate /);
      for (const named of ['--demo', '--version', 'PORT', 'HOSTNAME', 'ALLOWED_TARGETS']) {
        expect(ran.stdout).toContain(named);
      }
      expect(ran.stdout).not.toContain('sqlgate listening');
    },
  );

  it.each([['--version'], ['-v']])('%s prints the version and exits 0', async (flag) => {
    const ran = await runBin([flag]);
    expect(ran).toEqual({ code: 0, signal: null, stdout: `${VERSION}\n`, stderr: '' });
  });

  it.each([[['--dmeo']], [['serve']], [['--port=8080']], [['--demo', '-x']]])(
    'refuses %j with one line on stderr and exit 2, serving nothing',
    async (args) => {
      const ran = await runBin(args);
      expect({ code: ran.code, signal: ran.signal, stdout: ran.stdout }).toEqual({
        code: 2,
        signal: null,
        stdout: '',
      });
      const lines = ran.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`unknown argument '${args.at(-1)}'`);
      expect(lines[0]).toContain('--help');
    },
  );
});

describe('the start-up warning of an open server', () => {
  const openWarnings = (output: string): unknown[] =>
    output
      .split('\n')
      .map((line) => line.replace(/^\| /, ''))
      .filter((line) => line.startsWith('{') && line.includes('without ALLOWED_TARGETS'))
      .map((line) => JSON.parse(line) as unknown);

  it('is logged once at warn when sqlgate listens on 0.0.0.0 without ALLOWED_TARGETS', async () => {
    const server = await startSqlgateProcess({ HOSTNAME: '0.0.0.0', LOG_LEVEL: 'info' });
    try {
      expect(openWarnings(server.output())).toEqual([
        expect.objectContaining({
          level: 40,
          listenHostname: '0.0.0.0',
          msg: expect.stringContaining('can make it connect to any host and port'),
        }),
      ]);
      // Each key once: JSON.parse keeps the last of two, so count them in the text itself.
      const line = server
        .output()
        .split('\n')
        .find((text) => text.includes('without ALLOWED_TARGETS'));
      expect(line?.match(/"hostname":/g)?.length).toBe(1);
    } finally {
      await server.stop();
    }
  });

  it.each([
    ['on 127.0.0.1', { HOSTNAME: '127.0.0.1' }],
    ['on localhost', { HOSTNAME: 'localhost' }],
    ['with ALLOWED_TARGETS', { HOSTNAME: '0.0.0.0', ALLOWED_TARGETS: '127.0.0.1' }],
  ])('is not logged %s', async (_, env) => {
    const server = await startSqlgateProcess({ ...env, LOG_LEVEL: 'info' });
    try {
      expect(server.output()).toContain('sqlgate listening');
      expect(openWarnings(server.output())).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
