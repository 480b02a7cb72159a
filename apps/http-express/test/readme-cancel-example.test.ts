/**
 * The README's cancel example ("Cancelling a running request") runs as written, with bash and curl,
 * against a real server and PostgreSQL: only the address and the connection fields change, to the
 * server's and the test database's. Sent at once, its cancel came before the request ran, and
 * cancelled nothing (404).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, type RunningServer } from '../src/server';
import { REPO_ROOT } from './readme-programs';
import { database } from './support';

/** The first ```sh block of the README's section `heading`. */
function shellExampleOf(heading: string): string {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
  if (block === undefined) throw new Error(`no sh block under ${heading}`);
  return block;
}

/** The connection fields of the README's examples ("On your own PostgreSQL"). */
const README_FIELDS = {
  host: '127.0.0.1',
  port: 5432,
  user: 'postgres',
  password: 'secret',
  database: 'postgres',
} as const;

/** The example pointed at `server` and the test database instead of localhost:3000 and 5432. */
function atTestServer(example: string, server: RunningServer): string {
  let text = example.replaceAll('localhost:3000', `127.0.0.1:${server.port}`);
  for (const [name, value] of Object.entries(README_FIELDS)) {
    const ours = database[name as keyof typeof README_FIELDS];
    text = text.replaceAll(
      `"${name}":${JSON.stringify(value)}`,
      `"${name}":${JSON.stringify(ours)}`,
    );
  }
  return text;
}

/** Runs `script` with bash in a process group of its own, killed whole if still running after. */
function runBash(
  script: string,
  limitMs: number,
): Promise<{ code: number | null; stdout: string }> {
  const child = spawn('bash', ['-c', script], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (stdout += chunk));
  const limit = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), limitMs);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(limit);
      // Whatever the script left running in the background goes with it.
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // The group is gone already.
      }
      resolve({ code, stdout });
    });
  });
}

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});
afterAll(() => server.close());

it('cancels the running request as written: the cancel answers cancelled, the request 409', async () => {
  const example = shellExampleOf('### Cancelling a running request');
  expect(example).toContain('SELECT pg_sleep(30)');
  // Past the statement's 30 s: a cancel that never lands shows as its 200, not as a killed script.
  const { code, stdout } = await runBash(atTestServer(example, server), 45_000);
  expect(code).toBe(0);
  expect(stdout).toContain('{"cancelled":true}');
  const answer = /\{"error".*\}/.exec(stdout)?.[0];
  // Cancelled in PostgreSQL (57014), or, on a machine too busy to start it within the example's
  // one second, before its statement ran: both as the README says.
  const parsed = JSON.parse(answer ?? '{}') as { cancelled?: boolean; error?: unknown };
  expect(parsed.cancelled).toBe(true);
  expect(parsed.error).toEqual(
    typeof parsed.error === 'string'
      ? 'The request was cancelled before any statement ran'
      : expect.objectContaining({ code: '57014' }),
  );
}, 60_000);
