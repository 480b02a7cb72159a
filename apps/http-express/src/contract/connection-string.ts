/**
 * Reading the Neon-Connection-String header (docs/interface.md, "The Neon-Connection-String
 * header"): a connection URI as libpq reads one, `postgresql://user:password@host:port/dbname?...`,
 * into the target a JSON body would name. Its parts are checked as a body's fields are
 * (readTargetFields); what the URI adds is refused when sqlgate could not honour it, since nothing
 * a caller sent is silently changed or dropped. No message shows the password, nor the host or user
 * part it may have spilled into when its `@` was not percent-encoded.
 */
import { isIPv6 } from 'node:net';
import { RequestError, SSL_MODES, type ConnectionTarget, type SslMode } from '@sqlgate/core';
import { readTargetFields } from './request-bodies';
import { invalid, refuseUnsendable } from './sendable-values';
import { shownFieldName } from './unknown-fields';

const HEADER = 'Neon-Connection-String';
const SCHEMES = ['postgresql://', 'postgres://'] as const;
/** libpq's default port. */
const DEFAULT_PORT = '5432';

/** The URI's parts, decoded, as the libpq keywords that may also be given as query parameters. */
interface UriParts {
  host?: string;
  port?: string;
  user?: string;
  password?: string;
  dbname?: string;
  sslmode?: string;
  channel_binding?: string;
  application_name?: string;
}

/** Query parameters that set a part of the URI: libpq lets them override it. */
const PART_PARAMETERS = new Set(['host', 'port', 'user', 'password', 'dbname']);

/**
 * The libpq parameters sqlgate cannot honour that a connection string commonly holds, with why.
 * Any other parameter is refused as one sqlgate does not accept.
 */
const REFUSED_PARAMETERS: Record<string, string> = {
  connect_timeout: "sqlgate's CONNECT_TIMEOUT_MS applies",
  options: 'sqlgate sends no server options at login (docs/decisions.md 10.1)',
};

/**
 * application_name is accepted and not used: the Neon driver adds it to every connection string,
 * and pooled connections serve every caller of a target under sqlgate's own name (docs/interface.md).
 */
const ACCEPTED_PARAMETERS = [...PART_PARAMETERS, 'sslmode', 'channel_binding', 'application_name'];

/**
 * What channel_binding may say. sqlgate authenticates with SCRAM without channel binding: `disable`
 * and `prefer` (libpq's default, which allows a login without it) are what it does. `require` is
 * accepted too, because the connection strings Neon gives out carry it; as it cannot be honoured, it is
 * accepted only with an sslmode that makes TLS required, so the caller still never gets a plain
 * connection (docs/interface.md).
 */
const CHANNEL_BINDINGS = ['disable', 'prefer', 'require'];
const TLS_REQUIRED: ReadonlySet<SslMode> = new Set(['require', 'verify-full']);

/**
 * The target a Neon-Connection-String header names. Throws RequestError (INVALID_REQUEST) with a
 * sentence saying what is wrong, never showing the password.
 */
export function connectionTargetOf(connectionString: string): ConnectionTarget {
  const parts = partsOf(connectionString);
  const sslMode = sslModeOf(parts);
  refuseChannelBinding(parts.channel_binding, sslMode);
  if (isAbsent(parts.user)) throw refused('names no user: write postgresql://user@host/dbname');
  if (isAbsent(parts.host)) throw refused('names no host: write postgresql://user@host/dbname');
  refuseSeveral(parts.host, 'hosts');
  refuseSeveral(parts.port, 'ports');
  const fields: Record<string, unknown> = {
    host: parts.host,
    port: isAbsent(parts.port) ? DEFAULT_PORT : parts.port,
    user: parts.user,
    // libpq's default database is the user's name.
    database: isAbsent(parts.dbname) ? parts.user : parts.dbname,
    sslMode,
  };
  if (parts.password !== undefined) fields.password = parts.password;
  try {
    return readTargetFields(fields);
  } catch (error) {
    // The body's wording names the field; the header's says where it was.
    if (error instanceof RequestError) throw refused(`has a wrong part: ${error.message}`);
    throw error;
  }
}

function isAbsent(value: string | undefined): value is undefined | '' {
  return value === undefined || value === '';
}

function refused(what: string) {
  return invalid(`The ${HEADER} header ${what}`);
}

/** The URI's parts, then its query parameters over them, as libpq reads them. */
function partsOf(connectionString: string): UriParts {
  const scheme = SCHEMES.find((prefix) => connectionString.startsWith(prefix));
  if (scheme === undefined) {
    throw refused(
      'must be a connection URI starting with postgresql:// or postgres:// (key=value connection strings are not accepted)',
    );
  }
  const rest = connectionString.slice(scheme.length);
  // The authority ends at the path or the query (RFC 3986); the path at the query.
  const authorityEnd = endOf(rest, /[/?]/);
  const queryStart = endOf(rest, /\?/);
  const authority = rest.slice(0, authorityEnd);
  const path = rest.slice(authorityEnd, queryStart);
  const parts: UriParts = { ...userinfoOf(authority), ...hostAndPortOf(authority) };
  if (path.length > 1) parts.dbname = decoded(path.slice(1), 'the database name');
  return { ...parts, ...queryParametersOf(rest.slice(queryStart + 1)) };
}

function endOf(text: string, pattern: RegExp): number {
  const found = pattern.exec(text);
  return found === null ? text.length : found.index;
}

/** `user[:password]` before the first `@`, as libpq splits it. */
function userinfoOf(authority: string): Pick<UriParts, 'user' | 'password'> {
  const at = authority.indexOf('@');
  if (at < 0) return {};
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { user: decoded(userinfo, 'the user name') };
  return {
    user: decoded(userinfo.slice(0, colon), 'the user name'),
    password: decoded(userinfo.slice(colon + 1), 'the password'),
  };
}

/** `host[:port]` after the userinfo; an IPv6 address in brackets, which are removed. */
function hostAndPortOf(authority: string): Pick<UriParts, 'host' | 'port'> {
  const hostAndPort = authority.slice(authority.indexOf('@') + 1);
  if (hostAndPort.includes('@')) {
    throw refused("has an '@' after the user name and password: write an '@' in them as %40");
  }
  refuseSeveral(hostAndPort, 'hosts');
  if (hostAndPort.startsWith('[')) return bracketedHostOf(hostAndPort);
  const colon = hostAndPort.indexOf(':');
  const host = colon < 0 ? hostAndPort : hostAndPort.slice(0, colon);
  const parts: Pick<UriParts, 'host' | 'port'> = { host: decoded(host, 'the host') };
  if (colon >= 0) parts.port = decoded(hostAndPort.slice(colon + 1), 'the port');
  return parts;
}

function bracketedHostOf(hostAndPort: string): Pick<UriParts, 'host' | 'port'> {
  const close = hostAndPort.indexOf(']');
  const after = hostAndPort.slice(close + 1);
  const host = close < 0 ? '' : decoded(hostAndPort.slice(1, close), 'the host');
  if (!isIPv6(host) || (after !== '' && !after.startsWith(':'))) {
    throw refused(
      'has a host in brackets that is not [IPv6 address], optionally followed by :port',
    );
  }
  const parts: Pick<UriParts, 'host' | 'port'> = { host };
  if (after !== '') parts.port = decoded(after.slice(1), 'the port');
  return parts;
}

/** `name=value&...`, each decoded; a name given twice is refused, as one value would be lost. */
function queryParametersOf(query: string): UriParts {
  const parameters: Record<string, string> = {};
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decoded(equals < 0 ? pair : pair.slice(0, equals), 'a query parameter name');
    // Refused before a refusal would show the name.
    refuseUnsendable(
      name,
      `The ${HEADER} header has a query parameter name that`,
      'which no name may hold',
    );
    const shown = shownParameter(name);
    if (equals < 0) throw refused(`has a query parameter ${shown} without '=' and a value`);
    if (pair.indexOf('=', equals + 1) >= 0) {
      throw refused(`has a query parameter ${shown} with a second '=': write it in a value as %3D`);
    }
    const known = knownParameter(name === 'ssl' ? 'sslmode' : name);
    if (Object.prototype.hasOwnProperty.call(parameters, known)) {
      throw refused(`gives the query parameter ${shown} more than once`);
    }
    parameters[known] = decoded(pair.slice(equals + 1), `the value of ${shown}`);
    if (name === 'ssl') parameters[known] = sslModeOfJdbcSsl(parameters[known]);
  }
  return parameters;
}

/** libpq's connection keywords: the only parameter names a refusal shows. */
const LIBPQ_KEYWORDS = new Set(
  (
    'host hostaddr port dbname user password passfile require_auth channel_binding connect_timeout ' +
    'client_encoding options application_name fallback_application_name keepalives ' +
    'keepalives_idle keepalives_interval keepalives_count tcp_user_timeout replication gssencmode ' +
    'sslmode requiressl sslcompression sslcert sslkey sslpassword sslcertmode sslrootcert sslcrl ' +
    'sslcrldir sslsni requirepeer ssl_min_protocol_version ssl_max_protocol_version krbsrvname ' +
    'gsslib gssdelegation service target_session_attrs load_balance_hosts ssl'
  ).split(' '),
);

/**
 * A parameter's name as a refusal shows it: a libpq keyword by name, anything else not at all.
 * An unknown "parameter" is often the end of a password whose `?`, `&` or `=` was not
 * percent-encoded, and no refusal may show a password.
 */
function shownParameter(name: string): string {
  return LIBPQ_KEYWORDS.has(name)
    ? `'${shownFieldName(name)}'`
    : "that is not a libpq keyword (its name is not shown: it may be the end of a password whose '?', '&' or '=' was not percent-encoded)";
}

/** `name` when sqlgate accepts it, or a refusal naming it. */
function knownParameter(name: string): keyof UriParts {
  if (ACCEPTED_PARAMETERS.includes(name)) return name as keyof UriParts;
  const shown = shownParameter(name);
  const reason = REFUSED_PARAMETERS[name];
  if (reason !== undefined) {
    throw refused(`has the parameter ${shown}, which sqlgate cannot honour: ${reason}`);
  }
  throw refused(
    `has a parameter ${shown}, which sqlgate does not accept; it accepts ${ACCEPTED_PARAMETERS.join(', ')}`,
  );
}

/** libpq reads `ssl=true`, from JDBC's URIs, as sslmode=require; any other value is an error. */
function sslModeOfJdbcSsl(value: string): string {
  if (value === 'true') return 'require';
  throw refused("has the parameter 'ssl' with a value other than true (libpq's sslmode=require)");
}

/**
 * The text percent-decoding `encoded` gives: UTF-8 behind each %XX. Invalid encoding is refused;
 * a NUL it decodes to is refused by the checks every target's text passes (readTargetFields) or,
 * in a parameter's name or value, by the parameter's own.
 */
function decoded(encoded: string, what: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw refused(
      `has invalid percent-encoding in ${what}: each % must start %XX, and the bytes must be UTF-8`,
    );
  }
}

/** `sslmode`, or the body's default (prefer, libpq's as well); modes sqlgate lacks are refused. */
function sslModeOf(parts: UriParts): SslMode {
  const mode = parts.sslmode;
  if (mode === undefined) return 'prefer';
  if ((SSL_MODES as readonly string[]).includes(mode)) return mode as SslMode;
  const supported = `sqlgate supports sslmode ${SSL_MODES.join(', ')}`;
  if (mode === 'allow') throw refused(`has sslmode=allow: ${supported} (prefer tries TLS first)`);
  if (mode === 'verify-ca') {
    throw refused(
      `has sslmode=verify-ca: ${supported} (verify-full verifies the certificate and the host name)`,
    );
  }
  throw refused(`has an sslmode that is not one of: ${SSL_MODES.join(', ')}`);
}

function refuseChannelBinding(channelBinding: string | undefined, sslMode: SslMode): void {
  if (channelBinding === undefined) return;
  if (!CHANNEL_BINDINGS.includes(channelBinding)) {
    throw refused(`has a channel_binding that is not one of: ${CHANNEL_BINDINGS.join(', ')}`);
  }
  if (channelBinding === 'require' && !TLS_REQUIRED.has(sslMode)) {
    throw refused(
      'has channel_binding=require, which needs TLS: add sslmode=require or sslmode=verify-full',
    );
  }
}

/** Several hosts or ports (libpq tries each in turn): sqlgate connects to one. */
function refuseSeveral(value: string | undefined, what: 'hosts' | 'ports'): void {
  if (value?.includes(',')) throw refused(`names several ${what}; sqlgate connects to one`);
}
