/**
 * The use cases the adapters call: run a query request, check a connection, report pools.
 * Transport-neutral: the HTTP app reads bodies into typed requests and turns these results into
 * status codes and JSON. Each step of a request is a module of pipeline/; what the service offers
 * and answers is in service-types.ts.
 */
import { cancelAnswer } from './execution/cancelled';
import { runRequest } from './pipeline/request-run';
import { WHOLE } from './pipeline/request-mode';
import { serviceParts } from './pipeline/service-parts';
import { streamRequest } from './pipeline/stream';
import type { QueryService, QueryServiceOptions } from './service-types';
import { createSessionUseCases } from './sessions/session-use-cases';
import { cacheAdministration } from './use-cases/cache-admin';
import { checkConnection } from './use-cases/check-connection';
import { serviceClosing } from './use-cases/closing';

export * from './service-types';

/**
 * Builds the query service over injected ports.
 *
 * @example
 * const service = createQueryService({ connections: createPostgresConnections() });
 * const { body } = await service.execute({
 *   target: {
 *     host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test',
 *     sslMode: 'prefer',
 *   },
 *   sql: 'SELECT 1',
 *   options: { rowMode: 'object', readOnly: false, dryRun: false },
 * });
 */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const parts = serviceParts(options);
  const { connections, sessions, running } = parts;
  const { closeSessions, close } = serviceClosing(parts);
  return {
    execute: (request, executeOptions = {}) => runRequest(parts, request, executeOptions, WHOLE),
    stream: (request, streamOptions = {}) => streamRequest(parts, request, streamOptions),
    copyFrom: (request, source, executeOptions = {}) =>
      runRequest(parts, request, executeOptions, { kind: 'copy-from', source }),
    checkConnection: (request) => checkConnection(parts, request),
    poolStats: () => connections.poolStats(),
    ...cacheAdministration(parts),
    ...createSessionUseCases({
      sessions,
      running,
      clock: parts.clock,
      ...(options.targetPolicy ? { targetPolicy: options.targetPolicy } : {}),
      runInSession: (request, executeOptions, inSession) =>
        runRequest(parts, request, executeOptions, { kind: 'session', inSession }),
    }),
    cancelRequest: (requestId, login) => cancelAnswer(running.cancel(requestId, login)),
    closeSessions,
    sessionStatistics: () => sessions.statistics(),
    sessionLimits: sessions.limits,
    knowsSession: (sessionId) => sessions.knows(sessionId),
    close,
    [Symbol.asyncDispose]: close,
  };
}
