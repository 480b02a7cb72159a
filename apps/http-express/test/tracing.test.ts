/**
 * OpenTelemetry spans (docs/decisions.md 10.25) seen through the SDK's in-memory exporter, as a
 * host app that registers an SDK would see them, against a real server and PostgreSQL.
 */
import { eventually } from '@sqlgate/testing';
import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { startServer, type RunningServer } from '../src/server';
import { database, target } from './support';

const exporter = new InMemorySpanExporter();
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  trace.disable();
  propagation.disable();
});
beforeEach(() => exporter.reset());

async function query(server: RunningServer, sql: string, traceparent?: string) {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify({ ...target(), sql }),
  });
  await response.text();
  return response.status;
}

/** Spans end when the answer has been sent: wait until the request's own span is exported. */
async function finishedSpans(): Promise<ReadableSpan[]> {
  await eventually(
    () => exporter.getFinishedSpans().some((span) => span.kind === SpanKind.SERVER),
    { everyMs: 10 },
  );
  return exporter.getFinishedSpans();
}

const parentIdOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('spans of a request', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
  });
  afterAll(() => server.close());

  it('form a tree under the caller’s traceparent: parse, pool acquire, one span per statement', async () => {
    const status = await query(
      server,
      "SELECT 1; SELECT 'two' AS second; SELECT 3",
      `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`,
    );
    expect(status).toBe(200);
    const spans = await finishedSpans();
    const request = spans.find((span) => span.kind === SpanKind.SERVER) as ReadableSpan;
    expect(request.name).toBe('POST /api/query');
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(parentIdOf(request)).toBe(CALLER_SPAN_ID);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/query',
      'http.response.status_code': 200,
      'db.namespace': database.database,
    });

    const children = spans.filter((span) => span !== request);
    for (const child of children) {
      expect(child.spanContext().traceId).toBe(TRACE_ID);
      expect(parentIdOf(child)).toBe(request.spanContext().spanId);
    }
    expect(children.filter((span) => span.name === 'sqlgate.parse')).toHaveLength(1);
    expect(children.find((span) => span.name === 'sqlgate.parse')?.attributes).toMatchObject({
      'sqlgate.statements': 3,
    });
    // Three reads run in parallel: each has its own connection.
    const acquires = children.filter((span) => span.name === 'sqlgate.pool.acquire');
    expect(acquires.length).toBeGreaterThanOrEqual(1);
    expect(acquires[0]?.attributes['sqlgate.pool.id']).toBe(
      `${database.host}:${database.port}:${database.user}:${database.database}`,
    );

    const statements = children
      .filter((span) => span.name === `SELECT ${database.database}`)
      .sort(
        (a, b) =>
          (a.attributes['sqlgate.statement.index'] as number) -
          (b.attributes['sqlgate.statement.index'] as number),
      );
    expect(statements).toHaveLength(3);
    statements.forEach((span, index) => {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.attributes).toEqual({
        'db.system.name': 'postgresql',
        'db.system': 'postgresql',
        'db.namespace': database.database,
        'db.operation.name': 'SELECT',
        'server.address': database.host,
        'server.port': database.port,
        'sqlgate.statement.index': index,
        'sqlgate.strategy': 'parallel-reads',
        'sqlgate.cached': false,
      });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });
    // Placed inside the request's time.
    const startOf = (span: ReadableSpan) => span.startTime[0] * 1e9 + span.startTime[1];
    const endOf = (span: ReadableSpan) => span.endTime[0] * 1e9 + span.endTime[1];
    for (const child of children) {
      expect(startOf(child)).toBeGreaterThanOrEqual(startOf(request));
      expect(endOf(child)).toBeLessThanOrEqual(endOf(request));
      expect(endOf(child)).toBeGreaterThanOrEqual(startOf(child));
    }
  });

  it('record a failed statement with its SQLSTATE, and never its text by default', async () => {
    expect(await query(server, "SELECT 'secret literal' FROM no_such_table")).toBe(400);
    const spans = await finishedSpans();
    const failed = spans.find(
      (span) => span.name === `SELECT ${database.database}`,
    ) as ReadableSpan;
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: '42P01' });
    expect(failed.attributes['db.response.status_code']).toBe('42P01');
    expect(failed.attributes['error.type']).toBe('42P01');
    expect(failed.events.map((event) => event.name)).toEqual(['exception']);
    expect(failed.attributes['db.query.text']).toBeUndefined();
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.events]))).not.toContain(
      'secret literal',
    );
    const request = spans.find((span) => span.kind === SpanKind.SERVER) as ReadableSpan;
    expect(request.attributes['http.response.status_code']).toBe(400);
  });
});

describe('span names', () => {
  it('never carry what the caller wrote: an unknown first word is OTHER', async () => {
    await using server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
    exporter.reset();
    expect(await query(server, 'hunterSECRET70 foo')).toBe(400);
    const spans = await finishedSpans();
    const names = spans.map((span) => span.name);
    expect(names).toContain(`OTHER ${database.database}`);
    expect(JSON.stringify(spans.map((span) => [span.name, span.attributes]))).not.toMatch(
      /SECRET/i,
    );
  });
});

describe('spans with OTEL_SQLGATE_STATEMENT=on', () => {
  it('carry the statement with its literals replaced by $n', async () => {
    await using server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      traceStatementText: true,
    });
    expect(await query(server, "SELECT 'secret' AS a, 42 AS b")).toBe(200);
    const spans = await finishedSpans();
    const statement = spans.find((span) => span.name === `SELECT ${database.database}`);
    expect(statement?.attributes['db.query.text']).toBe('SELECT $1 AS a, $2 AS b');
  });
});

describe('TRACING=off', () => {
  it('makes no span, even with an SDK registered', async () => {
    await using server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      tracing: false,
    });
    expect(await query(server, 'SELECT 1')).toBe(200);
    // The answer was read in full: a span would have been exported by now.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
