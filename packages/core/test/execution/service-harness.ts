/** The query service over the in-memory fake provider, for tests of the execution layer. */
import { createQueryService, type QueryService, type QueryServiceOptions } from '../../src/service';
import type { ExecuteOptions, QueryServiceResponse } from '../../src/service';
import { FakeConnectionProvider, fakeTarget } from '../fakes/fake-connections';
import { queryRequest } from '../requests';

export interface Harness {
  fake: FakeConnectionProvider;
  service: QueryService;
  /** Runs `sql` against the fake target, with the options that extra request fields name. */
  query(
    sql: string,
    fields?: Record<string, unknown>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
}

export function harness(options: Partial<QueryServiceOptions> = {}): Harness {
  const fake = new FakeConnectionProvider();
  const service = createQueryService({ connections: fake, ...options });
  const { host, port, user, password, database } = fakeTarget;
  return {
    fake,
    service,
    query: (sql, fields = {}, executeOptions) =>
      service.execute(
        queryRequest({ host, port, user, password, database, sql, ...fields }),
        executeOptions,
      ),
  };
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
