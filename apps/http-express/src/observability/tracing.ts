/**
 * OpenTelemetry spans through `@opentelemetry/api` alone (docs/decisions.md 10.25): without an
 * SDK registered by the host every call is a no-op, and once the request's span is known not to
 * record, nothing else is built. One SERVER span per request, its parent taken from the incoming
 * `traceparent` by the registered propagator; children for parsing, each pool acquire and each
 * statement, placed afterwards at the times the service measured. Attributes follow the database
 * semantic conventions; the statement's text (literals replaced by `$n`) only with
 * OTEL_SQLGATE_STATEMENT=on.
 */
import type { IncomingMessage } from 'node:http';
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import type { ParseEvent, PoolAcquireEvent, RequestObserver, StatementEvent } from '@sqlgate/core';
import { boundedName, commandLabel, methodLabel, poolLabel } from './labels';

/** A proxy: it follows whichever provider the host registers, before or after this runs. */
const tracer = trace.getTracer('@sqlgate/http-express');

export interface TracingOptions {
  /** Put the statement's text, literals replaced, in `db.query.text` (OTEL_SQLGATE_STATEMENT=on). */
  statementText: boolean;
}

/** A request's span and the observer that adds its children. */
export interface RequestTrace {
  observer: RequestObserver;
  end(status: number): void;
}

/** Starts the span of one request; undefined when no SDK records it. */
export function startRequestTrace(
  req: IncomingMessage,
  route: string,
  options: TracingOptions,
): RequestTrace | undefined {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = methodLabel(req.method);
  const span = tracer.startSpan(
    `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': method, 'http.route': route, 'url.path': route },
    },
    parent,
  );
  if (!span.isRecording()) return undefined;
  const parentOfChildren = trace.setSpan(parent, span);
  const common: Attributes = { 'db.system.name': 'postgresql', 'db.system': 'postgresql' };
  const child = (
    name: string,
    startMs: number,
    endMs: number,
    attributes: Attributes,
    failed = false,
  ): void => {
    const childSpan = tracer.startSpan(
      name,
      { kind: SpanKind.INTERNAL, startTime: startMs, attributes: { ...common, ...attributes } },
      parentOfChildren,
    );
    if (failed) childSpan.setStatus({ code: SpanStatusCode.ERROR });
    childSpan.end(endMs);
  };
  const observer: RequestObserver = {
    parsed(event: ParseEvent) {
      child('sqlgate.parse', event.startMs, event.endMs, {
        'sqlgate.statements': event.statements,
      });
    },
    poolAcquired(event: PoolAcquireEvent) {
      const attributes: Attributes = { 'sqlgate.pool.id': poolLabel(event.poolId) };
      const failed = event.failureCode !== undefined;
      if (failed) attributes['error.type'] = event.sqlState ?? event.failureCode;
      child('sqlgate.pool.acquire', event.startMs, event.endMs, attributes, failed);
    },
    statementEnded(event: StatementEvent) {
      if (event.startMs === undefined || event.endMs === undefined) return;
      const command = commandLabel(event.command);
      const database = boundedName(event.database);
      const attributes: Attributes = {
        ...common,
        'db.namespace': database,
        'db.operation.name': command,
        'server.address': boundedName(event.host),
        'server.port': event.port,
        'sqlgate.statement.index': event.index,
        'sqlgate.strategy': event.strategy,
        'sqlgate.cached': event.outcome === 'cached',
      };
      if (event.index === 0) span.setAttribute('db.namespace', database);
      if (options.statementText) attributes['db.query.text'] = event.normalisedText;
      if (event.sqlState) attributes['db.response.status_code'] = event.sqlState;
      if (event.outcome === 'error') attributes['error.type'] = event.sqlState ?? event.errorCode;
      const statementSpan = tracer.startSpan(
        `${command} ${database}`,
        { kind: SpanKind.CLIENT, startTime: event.startMs, attributes },
        parentOfChildren,
      );
      if (event.outcome === 'error') {
        const reason = event.sqlState ?? event.errorCode ?? 'error';
        statementSpan.recordException({ name: reason, code: reason, message: reason }, event.endMs);
        statementSpan.setStatus({ code: SpanStatusCode.ERROR, message: reason });
      }
      statementSpan.end(event.endMs);
    },
  };
  return {
    observer,
    end(status) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
