/**
 * ALLOWED_TARGETS and DNS rebinding: the connection goes to the address the policy checked, never
 * to whatever the name resolves to a moment later. The names used here resolve only through the
 * injected resolver, so a connection that resolved the name itself would fail.
 */
import { createQueryService, type QueryService } from '@sqlgate/core';
import { createPostgresConnections } from '@sqlgate/postgres-adapter';
import { createAllowedTargets, type ResolveAll } from '../src/allowed-targets';
import { database } from './support';
import { readConnectionCheckBody, readQueryBody } from '../src/contract';

const NAME = 'rebinding.sqlgate.invalid';
/** TEST-NET-1 (RFC 5737): never a real server. */
const UNCHECKED = '192.0.2.1';

/** Answers `first` once, then `later` for every further question: a rebinding name server. */
function rebindingResolver(first: string[], later: string[]): ResolveAll & { calls: number } {
  const resolve = Object.assign(
    async (host: string): Promise<string[]> => {
      if (host !== NAME) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      resolve.calls += 1;
      return resolve.calls === 1 ? first : later;
    },
    { calls: 0 },
  );
  return resolve;
}

const body = (overrides: Record<string, unknown> = {}) => ({
  host: NAME,
  port: database.port,
  user: database.user,
  password: database.password,
  database: database.database,
  sql: 'SELECT host(inet_server_addr()) AS server',
  ...overrides,
});

let service: QueryService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

function serviceWith(resolveAll: ResolveAll): QueryService {
  service = createQueryService({
    connections: createPostgresConnections({ connectTimeoutMs: 2_000 }),
    targetPolicy: createAllowedTargets(database.host, { resolveAll }),
  });
  return service;
}

it('returns the checked address as the address to connect to, keeping the host', async () => {
  const policy = createAllowedTargets('127.0.0.1', {
    resolveAll: async () => ['127.0.0.1'],
  });
  const target = {
    host: 'db.example',
    port: 5432,
    user: 'u',
    database: 'd',
    sslMode: 'prefer' as const,
  };
  await expect(policy.check(target)).resolves.toEqual({ ...target, address: '127.0.0.1' });
});

it('denies a name when any address it resolves to is not allowed', async () => {
  const policy = createAllowedTargets('127.0.0.1', {
    resolveAll: async () => ['127.0.0.1', UNCHECKED],
  });
  await expect(
    policy.check({ host: 'db.example', port: 5432, user: 'u', database: 'd', sslMode: 'prefer' }),
  ).rejects.toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
});

it('connects to the address it checked even when the name resolves elsewhere afterwards', async () => {
  const resolveAll = rebindingResolver([database.host], [UNCHECKED]);
  const { failure, body: result } = await serviceWith(resolveAll).execute(readQueryBody(body()));
  expect(failure).toBeUndefined();
  expect((result as { rows?: unknown }).rows).toEqual([{ server: database.host }]);
  // The name was resolved once, by the check; nothing resolved it again before connecting.
  expect(resolveAll.calls).toBe(1);
});

it('checks every request anew: a name rebound to a denied address is refused', async () => {
  const resolveAll = rebindingResolver([database.host], [UNCHECKED]);
  const checked = serviceWith(resolveAll);
  expect((await checked.execute(readQueryBody(body()))).failure).toBeUndefined();
  const second = await checked.execute(readQueryBody(body()));
  expect(second.failure?.code).toBe('TARGET_NOT_ALLOWED');
});

it('tests a connection on the checked address too (POST /api/test-connection)', async () => {
  const resolveAll = rebindingResolver([database.host], [UNCHECKED]);
  const { body: result } = await serviceWith(resolveAll).checkConnection(
    readConnectionCheckBody(body()),
  );
  expect(result).toMatchObject({ success: true });
  expect(resolveAll.calls).toBe(1);
});

const itWithCertificate =
  database.tls && database.caCertificate && database.source === 'local-cluster' ? it : it.skip;

itWithCertificate(
  'verify-full checks the certificate against the host name, not the pinned address',
  async () => {
    const verifying = (host: string) => {
      service = createQueryService({
        connections: createPostgresConnections({ rootCertificate: database.caCertificate! }),
        targetPolicy: createAllowedTargets(database.host, {
          resolveAll: async () => [database.host],
        }),
      });
      return service.execute(readQueryBody(body({ host, sslMode: 'verify-full' })));
    };
    // The certificate names localhost: the name the caller gave is what TLS checks.
    expect((await verifying('localhost')).failure).toBeUndefined();
    await service?.close();
    // The certificate also names 127.0.0.1, the pinned address; a name it lacks is still refused.
    const otherName = await verifying(NAME);
    expect(otherName.failure).toBeDefined();
    expect(JSON.stringify(otherName.body)).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
  },
);
