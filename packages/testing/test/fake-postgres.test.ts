import { connect } from 'node:net';
import {
  backend,
  chooseMutation,
  createRandom,
  encode,
  eventually,
  EVEN_WEIGHTS,
  MUTATIONS,
  mutateAnswer,
  mutatingBehaviour,
  replyWith,
  startFakePostgres,
  type FakePostgres,
  type Reply,
} from '@sqlgate/testing';
import { Client, type ClientConfig } from 'pg';
import { Parser } from 'pg-protocol/dist/parser';

jest.setTimeout(20_000);

const started: FakePostgres[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((fake) => fake.close()));
});

async function fake(options: Parameters<typeof startFakePostgres>[0] = {}): Promise<FakePostgres> {
  const server = await startFakePostgres(options);
  started.push(server);
  return server;
}

function clientOf(server: FakePostgres, overrides: ClientConfig = {}): Client {
  const client = new Client({
    host: server.host,
    port: server.port,
    user: 'someone',
    password: 'anything',
    database: 'fake',
    ssl: false,
    connectionTimeoutMillis: 5_000,
    ...overrides,
  });
  // A fault test's client may see its connection die; that must not fail this test file.
  client.on('error', () => undefined);
  return client;
}

/** Parses bytes as pg's protocol parser does, returning what it made of them or what it threw. */
function parseLikePg(bytes: Buffer): { names: string[]; thrown?: unknown } {
  const names: string[] = [];
  try {
    new Parser().parse(bytes, (message) => names.push(message.name));
    return { names };
  } catch (thrown) {
    return { names, thrown };
  }
}

const SELECT_ANSWER = [
  backend.parseComplete(),
  backend.bindComplete(),
  backend.rowDescription([{ name: 'v' }]),
  backend.dataRow(['one']),
  backend.dataRow(['two']),
  backend.commandComplete('SELECT 2'),
  backend.readyForQuery('I'),
];

describe('startFakePostgres', () => {
  it('lets pg log in and answers extended and simple queries like a server', async () => {
    const server = await fake();
    const client = clientOf(server);
    await client.connect();
    try {
      const rows = await client.query("SELECT 'x' AS v FROM generate_series(1, 3)");
      expect(rows.rows).toEqual([{ v: 'x' }, { v: 'x' }, { v: 'x' }]);
      expect(rows.fields.map((field) => [field.name, field.dataTypeID])).toEqual([['v', 25]]);
      const withParams = await client.query('SELECT $1::text AS p', ['a']);
      expect(withParams.command).toBe('SELECT');
      const simple = (await client.query('BEGIN; INSERT INTO t VALUES (1); COMMIT')) as unknown as {
        command: string;
      }[];
      expect(simple.map((result) => result.command)).toEqual(['BEGIN', 'INSERT', 'COMMIT']);
      await expect(client.query("SELECT fake_error('42P01')")).rejects.toMatchObject({
        code: '42P01',
      });
    } finally {
      await client.end();
    }
    expect(server.connections).toBe(1);
    expect(server.roundTrips).toBeGreaterThanOrEqual(4);
  });

  it('refuses TLS with N, as a server without TLS does', async () => {
    const server = await fake();
    await expect(
      clientOf(server, { ssl: { rejectUnauthorized: false } }).connect(),
    ).rejects.toThrow(/does not support SSL/);
  });

  it('hands each round trip to the behaviour, with the texts and the well-formed answer', async () => {
    const seen: { texts: readonly string[]; types: string[] }[] = [];
    const server = await fake({
      behaviour: (trip) => {
        seen.push({ texts: trip.texts, types: trip.answer.map((message) => message.type) });
        return replyWith(trip.answer);
      },
    });
    const client = clientOf(server);
    await client.connect();
    await client.query("SELECT 'a' AS v FROM generate_series(1, 2)");
    await client.end();
    expect(seen).toEqual([
      {
        texts: ["SELECT 'a' AS v FROM generate_series(1, 2)"],
        // pg sends a query without parameters as a simple Query.
        types: ['T', 'D', 'D', 'C', 'Z'],
      },
    ]);
  });

  it('keeps serving other connections when a behaviour throws, and counts cancel requests', async () => {
    const server = await fake({
      behaviour: (trip) => {
        if (trip.texts.some((text) => text.includes('boom'))) throw new Error('boom');
        return replyWith(trip.answer);
      },
    });
    const broken = clientOf(server);
    await broken.connect();
    await expect(broken.query("SELECT 'boom'")).rejects.toThrow();
    const healthy = clientOf(server);
    await healthy.connect();
    expect((await healthy.query("SELECT 'fine' AS v")).rows).toEqual([{ v: 'fine' }]);
    await healthy.end();

    await new Promise<void>((resolve) => {
      const socket = connect({ host: server.host, port: server.port }, () => {
        const packet = Buffer.alloc(16);
        packet.writeInt32BE(16, 0);
        packet.writeInt32BE(80877102, 4);
        socket.end(packet);
      });
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    });
    expect(server.cancelRequests).toBe(1);
  });

  it('closes a connection that sends garbage and keeps serving the others', async () => {
    const server = await fake();
    const random = createRandom(11);
    for (const garbage of [
      random.bytes(64),
      Buffer.from([0, 0, 0, 8, 0, 0, 0, 0]), // an unknown protocol version
      Buffer.from([0x7f, 0xff, 0xff, 0xff]), // a startup packet announcing 2 GB
    ]) {
      const closed = await new Promise<boolean>((resolve) => {
        const socket = connect({ host: server.host, port: server.port }, () =>
          socket.write(garbage),
        );
        socket.setTimeout(2_000, () => {
          socket.destroy();
          resolve(false);
        });
        socket.on('close', () => resolve(true));
        socket.on('error', () => undefined);
      });
      expect(closed).toBe(true);
    }
    const client = clientOf(server);
    await client.connect();
    expect((await client.query("SELECT 'still here' AS v")).rows).toEqual([{ v: 'still here' }]);
    await client.end();
  });

  it('close() destroys every socket, hung ones included', async () => {
    const server = await fake({ behaviour: () => ({ chunks: [], then: 'hang' }) });
    const client = clientOf(server);
    await client.connect();
    const pending = client.query('SELECT 1');
    // The query reached the server, which leaves it unanswered.
    await eventually(() => expect(server.roundTrips).toBe(1));
    expect(server.openSockets).toBe(1);
    await server.close();
    await expect(pending).rejects.toThrow(/terminated/i);
    expect(server.openSockets).toBe(0);
    await expect(server.close()).resolves.toBeUndefined();
  });

  it('with a mutating behaviour, every answer is broken and the fake server lives on', async () => {
    // Only mutations that end in a closed connection or a server error are safe to meet in this
    // process: pg throws the others out of a socket handler, which would kill the test worker.
    const safe = await fake({
      seed: 7,
      behaviour: mutatingBehaviour({
        rate: 1,
        weights: { 'close-mid-answer': 1, 'close-without-answer': 1, 'truncate-then-close': 1 },
      }),
    });
    for (let i = 0; i < 10; i++) {
      const client = clientOf(safe);
      await client.connect();
      await expect(client.query(`SELECT 'row ${i}' AS v`)).rejects.toThrow();
      await client.end().catch(() => undefined);
    }
    expect(safe.connections).toBe(10);
    expect(safe.roundTrips).toBe(10);
  });
});

describe('the mutation engine', () => {
  it('is deterministic for a seed', () => {
    const reply = (seed: number): Reply[] =>
      MUTATIONS.map((name) => mutateAnswer(name, SELECT_ANSWER, createRandom(seed)));
    const bytes = (replies: Reply[]) =>
      replies.map((each) => Buffer.concat(each.chunks).toString('hex'));
    expect(bytes(reply(42))).toEqual(bytes(reply(42)));
    expect(bytes(reply(42))).not.toEqual(bytes(reply(43)));
  });

  it('never makes a reply larger than a few kilobytes, whatever length it announces', () => {
    const random = createRandom(1);
    for (let i = 0; i < 2_000; i++) {
      const name = chooseMutation(EVEN_WEIGHTS, random);
      const reply = mutateAnswer(name, SELECT_ANSWER, random);
      expect(Buffer.concat(reply.chunks).length).toBeLessThan(4096);
    }
  });

  it('chooses only mutations with a positive weight', () => {
    const random = createRandom(3);
    const chosen = new Set(
      Array.from({ length: 500 }, () =>
        chooseMutation({ 'never-answer': 0, 'random-bytes': 1, 'length-max': 3 }, random),
      ),
    );
    expect([...chosen].sort()).toEqual(['length-max', 'random-bytes']);
  });

  it('reproduces the reported crash: a DataRow announcing 2 bytes makes pg-protocol throw', () => {
    const reply = mutateAnswer('length-too-small-at-end', SELECT_ANSWER, {
      ...createRandom(5),
      // Choose the first DataRow and length 2.
      chance: () => true,
      pick: <T>(items: readonly T[]) => items[0] as T,
      int: (min: number, max: number) => (min <= 2 && max >= 2 ? 2 : min),
    });
    expect(reply.malformed).toBe(true);
    expect(reply.then).toBe('hang');
    const bytes = Buffer.concat(reply.chunks);
    expect(bytes.subarray(-7, -2)).toEqual(Buffer.from([0x44, 0, 0, 0, 2]));
    const parsed = parseLikePg(bytes);
    expect(parsed.names).toEqual(['parseComplete', 'bindComplete', 'rowDescription']);
    // Node's own RangeError, from another realm than the test's: compared by name.
    expect(parsed.thrown).toMatchObject({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
  });

  it('gives pg-protocol well-formed bytes when nothing is mutated', () => {
    expect(parseLikePg(encode(SELECT_ANSWER))).toEqual({
      names: [
        'parseComplete',
        'bindComplete',
        'rowDescription',
        'dataRow',
        'dataRow',
        'commandComplete',
        'readyForQuery',
      ],
    });
  });

  it('marks what breaks the protocol and what a client must take in its stride', () => {
    const random = createRandom(9);
    const marks = (name: (typeof MUTATIONS)[number]) =>
      mutateAnswer(name, SELECT_ANSWER, random).malformed === true;
    expect(marks('length-too-small')).toBe(true);
    expect(marks('datarow-extra-field')).toBe(true);
    expect(marks('unexpected-message')).toBe(true);
    expect(marks('asynchronous-message')).toBe(false);
    expect(marks('answer-then-close')).toBe(false);
    expect(marks('never-answer')).toBe(false);
  });
});
