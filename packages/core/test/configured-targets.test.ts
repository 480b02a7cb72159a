/**
 * The default target of the server's configuration (docs/decisions.md 10.48): a request that names
 * none of host, port, user and database runs there; one that names any of them is parsed as
 * always; a password or an sslMode without a target is refused rather than dropped.
 */
import { createQueryService } from '../src/service';
import type { ConnectionTarget } from '../src/ports/connections';
import { FakeConnectionProvider, fakeTarget } from './fakes/fake-connections';

const defaultTarget: ConnectionTarget = {
  host: '127.0.0.1',
  port: 54321,
  user: 'postgres',
  database: 'postgres',
  sslMode: 'disable',
};

function serviceWith(configured: ConnectionTarget | undefined) {
  const fake = new FakeConnectionProvider().on('SELECT 1', { rows: [{ one: 1 }] });
  const service = createQueryService({
    connections: fake,
    ...(configured ? { configuredTargets: { default: configured } } : {}),
  });
  const targets = () => fake.callsOf('acquire').map((call) => call.target);
  return { fake, service, targets };
}

describe('a default target in the configuration', () => {
  it('runs a query whose body names no target there', async () => {
    const { service, targets } = serviceWith(defaultTarget);
    const response = await service.execute({ sql: 'SELECT 1' });
    expect(response.failure).toBeUndefined();
    expect(response.body).toMatchObject({ rows: [{ one: 1 }] });
    expect(targets()).toEqual([defaultTarget]);
    await service.close();
  });

  it('leaves a body that names its own target to it, fields as sent', async () => {
    const { service, targets } = serviceWith(defaultTarget);
    const { host, port, user, password, database } = fakeTarget;
    const response = await service.execute({
      host,
      port,
      user,
      password,
      database,
      sql: 'SELECT 1',
    });
    expect(response.failure).toBeUndefined();
    expect(targets()).toEqual([{ host, port, user, password, database, sslMode: 'prefer' }]);
    await service.close();
  });

  it('names the missing fields of a body that names part of a target, as without one', async () => {
    const { service, targets } = serviceWith(defaultTarget);
    const response = await service.execute({ host: 'db.example', sql: 'SELECT 1' });
    expect(response.body).toEqual({
      error: 'Missing required fields',
      missing: ['port', 'user', 'database'],
    });
    expect(targets()).toEqual([]);
    await service.close();
  });

  it('refuses a password or an sslMode sent without a target, instead of dropping them', async () => {
    const { service, targets } = serviceWith(defaultTarget);
    const withPassword = await service.execute({ password: 'secret', sql: 'SELECT 1' });
    expect(withPassword.failure?.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(withPassword.body)).toContain(
      "'password' belongs to a target the request names",
    );
    const withBoth = await service.execute({ password: 'x', sslMode: 'require', sql: 'SELECT 1' });
    expect(JSON.stringify(withBoth.body)).toContain("'password' and 'sslMode' belong to a target");
    expect(targets()).toEqual([]);
    await service.close();
  });

  it('still requires the SQL text', async () => {
    const { service } = serviceWith(defaultTarget);
    const response = await service.execute({});
    expect(response.body).toEqual({ error: 'Missing required fields', missing: ['sql'] });
    await service.close();
  });

  it('checks the connection of a body without a target on the default target', async () => {
    const { service } = serviceWith(defaultTarget);
    const check = await service.checkConnection({});
    expect(check.body).toMatchObject({ success: true, database: 'postgres', user: 'postgres' });
    await service.close();
  });

  it('takes a cancel without a target as one for the default target', async () => {
    const { service } = serviceWith(defaultTarget);
    const answer = service.cancelRequest('no-such-request', {});
    expect(answer.failure?.code).toBe('REQUEST_NOT_FOUND');
    await service.close();
  });

  it('opens a session of a body without a target on the default target', async () => {
    const { service, targets } = serviceWith(defaultTarget);
    const opened = await service.openSession({});
    expect(opened.failure).toBeUndefined();
    expect(targets()).toEqual([defaultTarget]);
    await service.closeSessions();
    await service.close();
  });
});

describe('without a default target', () => {
  it('a body without a target misses its fields, as it always did', async () => {
    const { service, targets } = serviceWith(undefined);
    const response = await service.execute({ sql: 'SELECT 1' });
    expect(response.body).toEqual({
      error: 'Missing required fields',
      missing: ['host', 'port', 'user', 'database'],
    });
    const check = await service.checkConnection({});
    expect(check.body).toMatchObject({ success: false });
    expect(targets()).toEqual([]);
    await service.close();
  });
});
