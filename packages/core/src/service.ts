/**
 * The use cases the adapters call: run a query request, check a connection, report pools.
 * Transport-neutral: the HTTP app only turns these results into status codes and JSON. Each step
 * of a request is a module of pipeline/; what the service offers and answers is in service-types.ts.
 */
import { cancelByRequestId } from './execution/cancelled';
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
 * const { body } = await service.execute({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test', sql: 'SELECT 1' });
 */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const parts = serviceParts(options);
  const { connections, sessions, running } = parts;
  const sessionUseCases = createSessionUseCases({
    sessions,
    running,
    clock: parts.clock,
    ...(options.targetPolicy ? { targetPolicy: options.targetPolicy } : {}),
    ...(options.configuredTargets ? { configuredTargets: options.configuredTargets } : {}),
    runInSession: (body, executeOptions, inSession) =>
      runRequest(parts, body, executeOptions, { kind: 'session', inSession }),
  });
  const { closeSessions, close } = serviceClosing(parts);
  return {
    execute: (body, executeOptions = {}) => runRequest(parts, body, executeOptions, WHOLE),
    stream: (body, streamOptions = {}) => streamRequest(parts, body, streamOptions),
    copyFrom: (body, source, executeOptions = {}) =>
      runRequest(parts, body, executeOptions, { kind: 'copy-from', source }),
    checkConnection: (body) => checkConnection(parts, body),
    poolStats: () => connections.poolStats(),
    ...cacheAdministration(parts),
    openSession: sessionUseCases.openSession,
    executeInSession: sessionUseCases.executeInSession,
    closeSession: sessionUseCases.closeSession,
    cancelSessionQuery: sessionUseCases.cancelSessionQuery,
    cancelRequest: (requestId, body) =>
      cancelByRequestId(running, requestId, body, options.configuredTargets),
    closeSessions,
    sessionStatistics: () => sessions.statistics(),
    knowsSession: (sessionId) => sessions.knows(sessionId),
    close,
    [Symbol.asyncDispose]: close,
  };
}
