/**
 * The built bin with WORKERS=2, started behind a real PgBouncer in transaction mode while other
 * callers' transactions run through the same PgBouncer (docs/decisions.md 10.32, 10.33): each
 * worker probes the target under that traffic, and every request that needs session state to
 * outlive its transaction is refused, every time, in every pool order and size. The other callers'
 * writes never meet a session setting such a request would have left on a server connection.
 * Every request goes on a connection of its own, so that both workers answer.
 */
import { startLocalPgBouncer, type LocalPgBouncer } from '@sqlgate/testing';
import { rawRequest } from './raw-http';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { database, sql } from './support';
import { childrenOf } from './worker-processes';

const TABLE = 'probe_workers_writes';
/** Worker pids seen, killed at the end so that none outlives the file. */
const seenWorkers = new Set<number>();

beforeAll(async () => {
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
  await sql(`CREATE TABLE ${TABLE} (id serial PRIMARY KEY, caller int NOT NULL)`);
});
afterAll(async () => {
  for (const pid of seenWorkers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function fresh(server: SqlgateProcess, path: string, body: unknown): Promise<Answer> {
  const response = await rawRequest({
    port: Number(new URL(server.url).port),
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: response.json() as Record<string, unknown> };
}

/**
 * Callers writing through `server` until stopped: transactions of several round trips (a backend
 * held, idle in between) and lone statements. What each was answered, when not 200.
 */
function otherCallers(server: SqlgateProcess, fields: Record<string, unknown>, callers: number) {
  let running = true;
  let answered = 0;
  const failures: Answer[] = [];
  const caller = async (id: number): Promise<void> => {
    for (let round = 0; running; round++) {
      const sqlText =
        round % 2 === 0
          ? `BEGIN; INSERT INTO ${TABLE} (caller) VALUES (${id}); SELECT pg_sleep(0.002); COMMIT`
          : `INSERT INTO ${TABLE} (caller) VALUES (${id})`;
      const answer = await fresh(server, '/api/query', { ...fields, sql: sqlText });
      answered += 1;
      if (answer.status !== 200) failures.push(answer);
    }
  };
  const loops = Array.from({ length: callers }, (_, id) => caller(id));
  return {
    get answered() {
      return answered;
    },
    async stop(): Promise<Answer[]> {
      running = false;
      await Promise.all(loops);
      return failures;
    },
  };
}

/** What needs session state to outlive its transaction: each is refused behind this pooler. */
const NEEDS_STATE: [string, Record<string, unknown>][] = [
  ['/api/query', { sql: 'SET search_path = public' }],
  ['/api/query', { sql: 'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY' }],
  ['/api/sessions', {}],
];

/** Each start probes anew in both workers, as after a restart. */
const STARTS = 3;

describe.each<[number, Record<string, string>]>([
  [1, {}],
  [2, {}],
  [4, {}],
  [1, { server_round_robin: '1' }],
  [2, { server_round_robin: '1' }],
  [4, { server_round_robin: '1' }],
])('PgBouncer in transaction mode of %i server connections %j', (poolSize, settings) => {
  let bouncer: LocalPgBouncer;
  beforeAll(async () => {
    bouncer = await startLocalPgBouncer({
      server: database,
      poolMode: 'transaction',
      poolSize,
      settings,
    });
  });
  afterAll(() => bouncer?.stop());

  it(`refuses every request that needs session state, from both workers, while others write (${STARTS} starts)`, async () => {
    const fields = {
      host: bouncer.host,
      port: bouncer.port,
      user: database.user,
      password: database.password,
      database: bouncer.database,
      sslMode: 'disable',
    };
    for (let start = 0; start < STARTS; start++) {
      const server = await startSqlgateProcess({ WORKERS: '2' });
      for (const pid of childrenOf(server.pid)) seenWorkers.add(pid);
      try {
        const others = otherCallers(server, fields, 6);
        // The workers probe under way: the first request that needs to know does it.
        while (others.answered < 12) await new Promise((resolve) => setTimeout(resolve, 10));
        const attempts = NEEDS_STATE.flatMap((each) => Array.from({ length: 6 }, () => each));
        const answers = await Promise.all(
          attempts.map(([path, body]) => fresh(server, path, { ...fields, ...body })),
        );
        const failures = await others.stop();
        expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual(
          attempts.map(() => [422, 'TRANSACTION_POOLING']),
        );
        // Nothing read-only was left behind on a server connection the writes then got.
        expect(failures).toEqual([]);
        expect(server.alive()).toBe(true);
      } finally {
        await server.stop();
      }
    }
  }, 120_000);
});
