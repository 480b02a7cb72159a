/**
 * Where a client's statements run: the database a connection string names, its password in it;
 * or, without a database password, a connection of the server's CONFIG_FILE named by its name and
 * reached with an API key or a JWT (docs/access.md). How each is presented: on POST /sql, the
 * Neon-Connection-String header (naming the connection by its database, with no password) and
 * `Authorization`; on opening a session, `{connection}` in the body and `Authorization`. Requests
 * in a session carry neither: its id is the credential.
 */

/**
 * An API key or a JWT, or a function giving one (or a Promise of one): called for every request,
 * so that a refreshed JWT is used.
 */
export type AuthToken = string | (() => string | Promise<string>);

/** Exactly one of a connection string, or a named connection with its key or token. */
export type TargetOptions =
  | { connectionString: string; connection?: undefined; authToken?: undefined }
  | { connection: string; authToken: AuthToken; connectionString?: undefined };

export type Target = { connectionString: string } | { connection: string; authToken: AuthToken };

const EXACTLY_ONE =
  'Give exactly one of connectionString (the database with its password) or connection with authToken (a connection of the server, with an API key or a JWT)';

/** The target `options` name, refused with a TypeError unless they name exactly one. */
export function targetOf(options: {
  connectionString?: unknown;
  connection?: unknown;
  authToken?: unknown;
}): Target {
  const { connectionString, connection, authToken } = options;
  if ((connectionString === undefined) === (connection === undefined)) {
    throw new TypeError(EXACTLY_ONE);
  }
  if (connectionString !== undefined) {
    if (typeof connectionString !== 'string') throw new TypeError('connectionString is a string');
    if (authToken !== undefined) {
      throw new TypeError(`authToken goes with connection, not connectionString. ${EXACTLY_ONE}`);
    }
    return { connectionString };
  }
  if (typeof connection !== 'string' || connection === '') {
    throw new TypeError("connection is the name of one of the server's connections");
  }
  return { connection, authToken: checkedToken(authToken) };
}

function checkedToken(authToken: unknown): AuthToken {
  if (typeof authToken === 'function' || (typeof authToken === 'string' && authToken !== '')) {
    return authToken as AuthToken;
  }
  throw new TypeError(
    'A connection needs authToken: an API key or a JWT, or a function returning one',
  );
}

/** `target` with the key or token a single call gives (as the Neon driver takes one per query). */
export function withToken(target: Target, authToken: AuthToken | undefined): Target {
  if (authToken === undefined) return target;
  if ('connectionString' in target) {
    throw new TypeError('authToken goes with a client made with connection, not connectionString');
  }
  return { connection: target.connection, authToken: checkedToken(authToken) };
}

async function bearer(authToken: AuthToken): Promise<string> {
  const given = typeof authToken === 'function' ? await authToken() : authToken;
  // A secret read from a file often ends with a newline, which no header may hold.
  const token = typeof given === 'string' ? given.trim() : '';
  if (token === '') {
    throw new TypeError('authToken gave no token: it must give an API key or a JWT as a string');
  }
  return `Bearer ${token}`;
}

/** POST /sql's headers naming `target`. The user part is ignored; the URI form needs one. */
export async function sqlHeaders(target: Target): Promise<Record<string, string>> {
  if ('connectionString' in target) return { 'Neon-Connection-String': target.connectionString };
  return {
    'Neon-Connection-String': `postgresql://sqlgate@gateway/${encodeURIComponent(target.connection)}`,
    Authorization: await bearer(target.authToken),
  };
}

/** The headers and body of POST /api/sessions opening a session on `target`. */
export async function sessionOpening(
  target: Target,
): Promise<{ headers: Record<string, string>; body: string }> {
  if ('connectionString' in target) {
    return { headers: { 'Neon-Connection-String': target.connectionString }, body: '{}' };
  }
  return {
    headers: { Authorization: await bearer(target.authToken) },
    body: JSON.stringify({ connection: target.connection }),
  };
}
