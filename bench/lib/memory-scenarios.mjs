// The memory scenarios of bench/memory.mjs that are not one large answer: clients that never read
// what they asked for (docs/decisions.md 10.37), and texts the SQL parser is given (10.17, 10.38).
// Each runs against a server process of its own, so that what one leaves behind is not counted by
// the next.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectClient, memoryOf, postJson, resetPeak, startServerProcess } from './harness.mjs';

const MiB = 1024 * 1024;

/** Callers besides the database's own user, each its own share of MAX_RESULT_BYTES_TOTAL. */
const ROLES = ['bench_idle_1', 'bench_idle_2', 'bench_idle_3', 'bench_idle_4', 'bench_reader'];
const ROLE_PASSWORD = 'bench-memory';

export async function createBenchRoles(database) {
  const client = await connectClient(database);
  try {
    for (const role of ROLES) {
      await client.query(
        `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} LOGIN PASSWORD '${ROLE_PASSWORD}'; END IF; END $$`,
      );
    }
  } finally {
    await client.end();
  }
}

const asRole = (target, role) =>
  role ? { ...target, user: role, password: ROLE_PASSWORD } : target;

/** Samples a process's RSS while `work` runs, after resetting its peak; returns both and the result. */
async function withPeak(pid, work) {
  const resettable = resetPeak(pid);
  let sampled = memoryOf(pid).rss;
  const sampler = setInterval(() => {
    try {
      sampled = Math.max(sampled, memoryOf(pid).rss);
    } catch {
      /* the process is gone */
    }
  }, 20);
  try {
    const result = await work();
    const now = memoryOf(pid);
    return { result, peak: resettable ? now.hwm : Math.max(sampled, now.rss) };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Sends a POST /api/query on a raw socket and never reads the answer; resolves with the socket
 * once the answer's first bytes came (the service has answered: its rows are held).
 */
function sendUnread(url, body) {
  const { hostname, port, host } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    socket.once('data', () => {
      socket.pause();
      resolve(socket);
    });
    socket.once('close', () => reject(new Error('the server closed an unread answer early')));
    socket.write(
      `POST /api/query HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

/** 600 rows of 100 KB: about 60 MB of rows, within MAX_RESULT_BYTES (64 MiB). */
const SIXTY_MB = "SELECT repeat('x', 100000) AS v FROM generate_series(1, 600)";
/** About 2 MB: the read of a caller who is not idle. */
const TWO_MB = "SELECT repeat('y', 1000) AS v FROM generate_series(1, 2000)";

/** What came back of the 2 MB read. */
const outcomeOf = ({ status, json }) =>
  status !== 200
    ? `status ${status}`
    : json?.truncated
      ? `cut at ${json.rows.length} of 2,000 rows`
      : `whole (${json?.rows?.length} rows)`;

/** After a read was cut because others held the budget, their idle answers get 10 s (10.37). */
const CONTENDED_STALL_MS = 10_000;

/**
 * Ten sockets that each ask for about 60 MB of rows and never read, at MAX_RESULT_BYTES_TOTAL
 * 512 MiB; then another caller's 2 MB read, and the same again 12 s later. `callers`: how many
 * users the ten sockets are spread over (1: one caller holds its share; 5: together they may hold
 * the whole budget).
 */
export async function idleClients(database, target, { callers }) {
  const server = await startServerProcess('sqlgate-server.mjs', {
    name: `sqlgate, ten idle clients of ${callers} caller(s)`,
    env: { MAX_RESULT_BYTES_TOTAL: String(512 * MiB) },
  });
  const idleRoles = [undefined, ...ROLES.slice(0, 4)].slice(0, callers);
  const sockets = [];
  try {
    await postJson(`${server.url}/api/query`, { ...target, sql: 'SELECT 1' });
    await sleep(500);
    const before = memoryOf(server.pid).rss;
    const { peak } = await withPeak(server.pid, async () => {
      const sent = Array.from({ length: 10 }, (_, index) =>
        sendUnread(
          server.url,
          JSON.stringify({ ...asRole(target, idleRoles[index % callers]), sql: SIXTY_MB }),
        ),
      );
      sockets.push(...(await Promise.all(sent)));
      // Held: the answers wait for clients that take nothing.
      await sleep(3_000);
    });
    const held = memoryOf(server.pid).rss;
    const read = () =>
      postJson(`${server.url}/api/query`, { ...asRole(target, 'bench_reader'), sql: TWO_MB });
    const first = await read();
    await sleep(CONTENDED_STALL_MS + 2_000);
    const again = await read();
    return {
      label: `ten idle clients, ${callers === 1 ? 'one user' : `${callers} users`}`,
      before,
      peak,
      held,
      otherRead: outcomeOf(first),
      otherReadAgain: outcomeOf(again),
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    await server.stop();
  }
}

/** 1,000 distinct 4 KB texts of `a;` (2,048 statements each), one request after another. */
const semicolonTexts = (index) => `${index};${'a;'.repeat(2046)}`;
/** A statement nested 30,000 deep (60 KB): PostgreSQL's parser overflows the stack on it. */
const overflowingText = (index) => `SELECT f${index}(${'a+'.repeat(30_000)}a) FROM t`;

const PARSER_WORKLOADS = [
  { label: '1,000 distinct 4 KB texts of `a;`', requests: 1000, text: semicolonTexts },
  { label: '60 statements that overflow the parser', requests: 60, text: overflowingText },
];

/** RSS of a fresh server before and after each parser workload. */
export async function parserWorkloads(target) {
  const results = [];
  for (const workload of PARSER_WORKLOADS) {
    const server = await startServerProcess('sqlgate-server.mjs', { name: 'sqlgate, parser' });
    try {
      await postJson(`${server.url}/api/query`, { ...target, sql: 'SELECT 1' });
      await sleep(500);
      const before = memoryOf(server.pid).rss;
      const started = performance.now();
      const { peak, result: statuses } = await withPeak(server.pid, async () => {
        const seen = new Set();
        for (let index = 0; index < workload.requests; index++) {
          const { status } = await postJson(`${server.url}/api/query`, {
            ...target,
            sql: workload.text(index),
          });
          seen.add(status);
        }
        return [...seen].join('/');
      });
      const seconds = (performance.now() - started) / 1000;
      await sleep(1_000);
      results.push({
        label: workload.label,
        statuses,
        seconds,
        before,
        peak,
        after: memoryOf(server.pid).rss,
      });
    } finally {
      await server.stop();
    }
  }
  return results;
}
