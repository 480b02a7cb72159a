import { testDatabaseFromEnvironment } from '@sqlgate/testing';
import { connectionUsesTls, sqlStateOf, withClient } from './connect';

const database = testDatabaseFromEnvironment();
const { caCertificate } = database;

/** A block that runs only when `reason` is undefined; otherwise its title says why it was skipped. */
const describeUnless = (reason: string | undefined) =>
  reason === undefined
    ? describe
    : (title: string, body: () => void) => describe.skip(`${title} (skipped: ${reason})`, body);

describe(`the run's test database (${database.source} at ${database.host}:${database.port})`, () => {
  it('accepts the published password', async () => {
    const answer = await withClient(database, { ssl: false }, (client) =>
      client.query<{ answer: number }>('SELECT 1 + 1 AS answer'),
    );
    expect(answer.rows).toEqual([{ answer: 2 }]);
  });

  it('accepts its connection string', async () => {
    const user = await withClient(
      database,
      { connectionString: database.connectionString, ssl: false },
      (client) => client.query<{ user: string }>('SELECT current_user AS user'),
    );
    expect(user.rows[0]?.user).toBe(database.user);
  });
});

describeUnless(
  database.source === 'env' ? 'TEST_DATABASE_URL may point at a trust-auth server' : undefined,
)('password authentication', () => {
  it('refuses a wrong password with SQLSTATE 28P01, so it is not trust auth', async () => {
    const attempt = withClient(
      database,
      { ssl: false, password: 'not-the-password' },
      async () => 0,
    );
    expect(await sqlStateOf(attempt)).toBe('28P01');
  });
});

describeUnless(database.tls ? undefined : 'the database does not offer TLS')('TLS', () => {
  it('encrypts a connection made with ssl', async () => {
    const encrypted = await withClient(database, { ssl: { rejectUnauthorized: false } }, (client) =>
      connectionUsesTls(client),
    );
    expect(encrypted).toBe(true);
  });

  describeUnless(caCertificate === undefined ? 'no CA certificate is known' : undefined)(
    'with certificate verification',
    () => {
      it('verifies the server certificate against the published CA for localhost', async () => {
        const ssl = { ca: caCertificate, servername: 'localhost' };
        const encrypted = await withClient(database, { ssl }, (client) =>
          connectionUsesTls(client),
        );
        expect(encrypted).toBe(true);
      });

      it('rejects the certificate for a name it was not issued for', async () => {
        const ssl = { ca: caCertificate, servername: 'elsewhere.example' };
        await expect(withClient(database, { ssl }, async () => 0)).rejects.toThrow(
          /elsewhere\.example/,
        );
      });
    },
  );
});
