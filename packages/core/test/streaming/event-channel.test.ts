/** The queue between a streamed request's connection and its transport (docs/decisions.md 10.22). */
import { parseSql, loadParser, type ParsedStatement } from '../../src/parser';
import type { FieldDescription, StatementResult } from '../../src/ports/connections';
import { copyOutOf } from '../../src/streaming/copy-out';
import {
  FREE_BYTES,
  SharedResultBudget,
  StreamedRowBudget,
} from '../../src/execution/result-budget';
import { EventChannel } from '../../src/streaming/event-channel';
import type { StreamEvent } from '../../src/streaming/stream-events';

let statements: ParsedStatement[];
beforeAll(async () => {
  await loadParser();
  statements = parseSql('SELECT 1; INSERT INTO t VALUES (1)');
});

const field = { name: 'n', dataTypeID: 23, dataTypeName: 'int4' } as FieldDescription;
const result = (command: string, rowCount: number): StatementResult => ({
  command,
  rowCount,
  fields: [],
  rows: [],
  truncated: false,
  durationMs: 1.5,
});

async function drain(channel: EventChannel): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of channel) events.push(event);
  return events;
}

describe('EventChannel', () => {
  it('turns a sink’s calls into events, with a header for a statement that has no rows', async () => {
    const channel = new EventChannel((statement) => statement.text);
    const sink = channel.sinkFor(statements);
    sink.describe(0, [field]);
    sink.row(0, { n: 1 }, 10);
    sink.row(0, { n: 2 }, 10);
    sink.complete(0, result('SELECT', 2));
    sink.complete(1, result('INSERT', 1));
    channel.close();
    expect(await drain(channel)).toEqual([
      { type: 'statement', index: 0, statement: 'SELECT 1', fields: [field] },
      { type: 'rows', rows: [{ n: 1 }, { n: 2 }] },
      { type: 'end', index: 0, command: 'SELECT', rowCount: 2, executionTime: 1.5 },
      { type: 'statement', index: 1, statement: 'INSERT INTO t VALUES (1)', fields: [] },
      { type: 'end', index: 1, command: 'INSERT', rowCount: 1, executionTime: 1.5 },
    ]);
  });

  it('asks the producer to wait past the high-water mark, and lets it go once rows were taken', async () => {
    const channel = new EventChannel((statement) => statement.text);
    const sink = channel.sinkFor(statements);
    sink.describe(0, [field]);
    let accepted = true;
    let pushed = 0;
    while (accepted) {
      accepted = sink.row(0, { n: pushed }, 100);
      pushed++;
    }
    // About 256 KiB of 100-byte rows, in batches of 256.
    expect(pushed).toBeGreaterThan(2000);
    expect(pushed).toBeLessThan(3000);
    let released = false;
    void sink.drained().then(() => (released = true));
    await Promise.resolve();
    expect(released).toBe(false);
    const iterator = channel[Symbol.asyncIterator]();
    let taken = 0;
    while (!released) {
      const { value } = await iterator.next();
      if (value?.type === 'rows') taken += value.rows.length;
      await Promise.resolve();
    }
    expect(taken).toBeGreaterThan(0);
    expect(taken).toBeLessThan(pushed);
  });

  it('lets the producer go and drops everything once the consumer leaves', async () => {
    const channel = new EventChannel((statement) => statement.text);
    const sink = channel.sinkFor(statements);
    sink.describe(0, [field]);
    while (sink.row(0, { n: 1 }, 4096));
    const waiting = sink.drained();
    const iterator = channel[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.return?.();
    await expect(waiting).resolves.toBeUndefined();
    expect(sink.row(0, { n: 2 }, 4096)).toBe(true);
    await expect(sink.drained()).resolves.toBeUndefined();
  });

  it('says whether anything started, and wakes whoever waits for it when it closes empty', async () => {
    const channel = new EventChannel((statement) => statement.text);
    channel.close();
    await channel.started;
    expect(channel.hasStarted).toBe(false);
    expect(await drain(channel)).toEqual([]);
  });
});

describe('COPY ... TO STDOUT format and encoding', () => {
  const formatOf = (sql: string) => copyOutOf(parseSql(sql)[0] as ParsedStatement);

  it.each([
    ['COPY t TO STDOUT', { format: 'text' }],
    ['COPY t TO STDOUT WITH (FORMAT csv, HEADER)', { format: 'csv' }],
    ["COPY t TO STDOUT (FORMAT 'csv')", { format: 'csv' }],
    ["COPY t TO STDOUT (FORMAT E'binary')", { format: 'binary' }],
    ["COPY t TO STDOUT (FORMAT U&'csv')", { format: 'csv' }],
    ['COPY BINARY t TO STDOUT', { format: 'binary' }],
    ['COPY t TO STDOUT WITH CSV HEADER', { format: 'csv' }],
    ["COPY (SELECT 'format binary') TO STDOUT", { format: 'text' }],
    ["COPY t TO STDOUT (FORMAT text, NULL 'csv')", { format: 'text' }],
    ["COPY t TO STDOUT (FORMAT csv, ENCODING 'LATIN1')", { format: 'csv', encoding: 'latin1' }],
    ["COPY t TO STDOUT (FORMAT csv, NULL 'stdout')", { format: 'csv' }],
    // ENCODING's value as PostgreSQL's grammar takes it: a string, a word, an identifier.
    ['COPY t TO STDOUT (ENCODING latin1)', { format: 'text', encoding: 'latin1' }],
    ['COPY t TO STDOUT (ENCODING "WIN1252")', { format: 'text', encoding: 'win1252' }],
    ["COPY t TO STDOUT ENCODING 'ISO 8859 1'", { format: 'text', encoding: 'iso 8859 1' }],
    ["COPY t TO STDOUT (ENCODING E'euc_jp')", { format: 'text', encoding: 'euc_jp' }],
    ['COPY t TO STDOUT (ENCODING $x$koi8r$x$)', { format: 'text', encoding: 'koi8r' }],
    ["COPY t TO STDOUT (NULL 'encoding ''x''')", { format: 'text' }],
    ['COPY t TO STDOUT (FORCE_QUOTE (encoding), FORMAT csv)', { format: 'csv' }],
    [
      "COPY t TO STDOUT (FORCE_QUOTE (encoding), FORMAT csv, ENCODING 'sjis')",
      { format: 'csv', encoding: 'sjis' },
    ],
  ])('%s', (sql, expected) => {
    expect(formatOf(sql)).toEqual(expected);
  });

  describe('with a row budget (MAX_RESULT_BYTES_TOTAL)', () => {
    const setup = () => {
      const shared = new SharedResultBudget(1000);
      const channel = new EventChannel(
        (statement) => statement.text,
        false,
        new StreamedRowBudget(shared),
      );
      return { shared, channel, sink: channel.sinkFor(statements) };
    };

    it('holds a row’s bytes until the consumer asks for more after taking it', async () => {
      const { shared, channel, sink } = setup();
      sink.describe(0, [field]);
      expect(sink.admit?.(FREE_BYTES + 600)).toBe(true);
      sink.row(0, { n: 1 }, FREE_BYTES + 600);
      expect(shared.availableBytes).toBe(400);
      const events = channel[Symbol.asyncIterator]();
      expect((await events.next()).value).toMatchObject({ type: 'statement' });
      expect((await events.next()).value).toEqual({ type: 'rows', rows: [{ n: 1 }] });
      // Taken, not yet written: still held, and a second large row is refused.
      expect(shared.availableBytes).toBe(400);
      expect(sink.admit?.(FREE_BYTES)).toBe(false);
      expect(channel.sharedLimit).toBe('caller');
      sink.complete(0, result('SELECT', 1));
      channel.close();
      expect((await events.next()).value).toMatchObject({ type: 'end' });
      expect(shared.availableBytes).toBe(1000);
      expect((await events.next()).done).toBe(true);
    });

    it('gives back what it holds when the consumer goes away, and what arrives later', async () => {
      const { shared, channel, sink } = setup();
      sink.describe(0, [field]);
      expect(sink.admit?.(FREE_BYTES + 600)).toBe(true);
      sink.row(0, { n: 1 }, FREE_BYTES + 600);
      channel.cancel();
      expect(shared.availableBytes).toBe(1000);
      expect(sink.admit?.(FREE_BYTES + 1000)).toBe(true);
      sink.row(0, { n: 2 }, FREE_BYTES + 1000);
      expect(shared.availableBytes).toBe(1000);
    });

    it('gives back everything on releaseRows, once', () => {
      const { shared, channel, sink } = setup();
      sink.describe(0, [field]);
      expect(sink.admit?.(FREE_BYTES + 1000)).toBe(true);
      expect(channel.heldRows?.holdsSharedBytes).toBe(true);
      channel.releaseRows();
      channel.releaseRows();
      expect(shared.availableBytes).toBe(1000);
      expect(channel.heldRows?.holdsSharedBytes).toBe(false);
    });
  });

  it('admits every row without a row budget', () => {
    const channel = new EventChannel((statement) => statement.text);
    expect(channel.sinkFor(statements).admit).toBeUndefined();
  });
});
