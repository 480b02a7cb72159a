/**
 * Keeps web pages from driving sqlgate (docs/decisions.md 10.16). Any page a user visits can send
 * requests to a sqlgate on the user's machine or network; sqlgate then connects to databases the
 * user can reach (a trust-auth PostgreSQL on localhost among them). Two checks stop that:
 *
 * - Origin: browsers put the page's origin on every cross-origin request. A request with an Origin
 *   that is neither sqlgate's own nor listed in CORS_ORIGINS is refused (403), preflights included,
 *   so a page can neither run SQL nor read statistics.
 * - Host: DNS rebinding makes an attacker's name resolve to 127.0.0.1, so the page is same-origin
 *   with sqlgate and the Origin check passes. Its requests still carry the attacker's name as Host;
 *   a sqlgate listening on loopback only accepts loopback names there (plus ALLOWED_HOSTS).
 *
 * Written against Node's request and response, so the Express app and the server's direct query
 * path share it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlockList, isIPv6, type Server, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { setAnswerHeader, writeAnswerHead } from './answer-headers';
import { writeJson } from './query-endpoint';

export interface BrowserGuardOptions {
  /** Origins (`scheme://host[:port]`) whose pages may call sqlgate (CORS_ORIGINS). */
  corsOrigins?: readonly string[];
  /** Host names accepted in the Host header besides loopback names (ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
}

/** Decides whether a request may go on; answers refusals and CORS preflights itself. */
export type BrowserGuard = (req: IncomingMessage, res: ServerResponse) => boolean;

const ALLOWED_METHODS = 'GET, POST, DELETE';
/** POST /sql's headers too: a page of a listed origin may use @sqlgate/client (docs/interface.md). */
const NEON_HEADERS =
  'Neon-Connection-String, Neon-Raw-Text-Output, Neon-Array-Mode, Neon-Batch-Isolation-Level, ' +
  'Neon-Batch-Read-Only, Neon-Batch-Deferrable, Sqlgate-Session';
const ALLOWED_HEADERS = `Content-Type, Authorization, X-Request-Id, Sqlgate-Consistency-Token, ${NEON_HEADERS}`;
const EXPOSED_HEADERS =
  'X-Request-Id, Server-Timing, Retry-After, Neon-Batch-Isolation-Level, Neon-Batch-Read-Only, ' +
  'Neon-Batch-Deferrable, Sqlgate-Consistency-Token';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Normalises one origin as browsers send it (`https://app.example.com`, default port dropped).
 * Throws on anything else: a path, a wildcard, `null`.
 */
export function normaliseOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`'${value}' is not an origin such as https://app.example.com`);
  }
  if (
    !/^https?:\/\/[^/?#@\s]+\/?$/i.test(value) ||
    (url.protocol !== 'http:' && url.protocol !== 'https:')
  ) {
    throw new Error(`'${value}' is not an origin such as https://app.example.com`);
  }
  return url.origin;
}

/** Normalises one host name or IP address as the Host check compares them. Throws on anything else. */
export function normaliseHostName(value: string): string {
  const bracketed = isIPv6(value) ? `[${value}]` : value;
  const hostname = hostnameOf(bracketed);
  // A colon outside the brackets of an IPv6 address would be a port: names only.
  if (hostname === undefined || bracketed.replace(/^\[[^\]]*\]/, '').includes(':')) {
    throw new Error(`'${value}' is not a host name or IP address (no port)`);
  }
  return hostname;
}

/** Splits a comma list, dropping blanks. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

// A Host header is `name[:port]` or `[v6]:port`; anything with userinfo, a path or spaces is refused
// before URL parsing could read a different host out of it (`x@127.0.0.1`).
const HOST_HEADER = /^(?:\[[0-9A-Fa-f:.]+\]|[^\s:/?#@[\]\\]+)(?::[0-9]{1,5})?$/;

/** The lower-case host name of a Host header value (IPv6 in brackets, IPv4 in dotted form). */
function hostnameOf(host: string): string | undefined {
  if (!HOST_HEADER.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

const LOOPBACK_ADDRESSES = new BlockList();
LOOPBACK_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_ADDRESSES.addAddress('::1', 'ipv6');

function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  return isIPv6(bare)
    ? LOOPBACK_ADDRESSES.check(bare, 'ipv6')
    : LOOPBACK_ADDRESSES.check(bare, 'ipv4');
}

/** A loopback name or address as a browser resolves it: `localhost`, `*.localhost`, 127/8, ::1. */
export function isLoopbackHostname(hostname: string): boolean {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  try {
    return isLoopbackAddress(hostname);
  } catch {
    return false; // not an IP address
  }
}

// Whether each server listens on loopback only, asked once per server: the address it is bound to
// decides, not the address a connection arrived on (a server bound to 0.0.0.0 is meant to be
// reached by other names).
const loopbackServers = new WeakMap<Server, boolean>();

function listensOnLoopbackOnly(socket: Socket): boolean {
  const server = (socket as Socket & { server?: Server }).server;
  if (!server) return false;
  let known = loopbackServers.get(server);
  if (known === undefined) {
    const address = server.address();
    known = address !== null && typeof address === 'object' && isLoopbackAddress(address.address);
    loopbackServers.set(server, known);
  }
  return known;
}

/**
 * The scheme the browser used. X-Forwarded-Proto (from a TLS-terminating proxy) is believed: a page
 * cannot set it on a cross-origin request without a preflight, and preflights from unlisted
 * origins are refused.
 */
function schemeOf(req: IncomingMessage): string {
  if ((req.socket as TLSSocket).encrypted) return 'https';
  const forwarded = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first === 'https' ? 'https' : 'http';
}

/** An absolute-form target (`http://name:port/path`): its scheme, then its authority. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i;

/**
 * The host a request addressed. RFC 9112 3.2.2: the authority of an absolute-form target replaces
 * Host (proxies send that form; Node routes it by its path).
 */
function addressedHost(req: IncomingMessage): string | undefined {
  const url = req.url ?? '';
  if (url.charCodeAt(0) !== 0x2f /* / */) {
    const absolute = ABSOLUTE_FORM.exec(url);
    if (absolute) return absolute[1];
  }
  return req.headers.host;
}

/** Node keeps the first of several Host lines; RFC 9112 3.2 asks for a 400 instead. */
function hasSeveralHostLines(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

/** sqlgate's own origin for this request: the scheme and the Host the browser addressed. */
function ownOrigin(req: IncomingMessage): string | undefined {
  const host = addressedHost(req);
  if (host === undefined || !HOST_HEADER.test(host)) return undefined;
  try {
    return new URL(`${schemeOf(req)}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/** Host values whose verdict a guard remembers. */
const HOST_VERDICTS_KEPT = 256;

const shown = (value: string): string => (value.length > 200 ? `${value.slice(0, 200)}...` : value);

function refuse(res: ServerResponse, message: string): false {
  writeJson(res, 403, JSON.stringify({ error: message }));
  return false;
}

/**
 * The guard for one app or server.
 *
 * @example
 * const admit = createBrowserGuard({ corsOrigins: ['https://console.example.com'] });
 * if (!admit(req, res)) return; // refused with 403, or a preflight answered
 */
export function createBrowserGuard(options: BrowserGuardOptions = {}): BrowserGuard {
  const corsOrigins = new Set((options.corsOrigins ?? []).map(normaliseOrigin));
  const allowedHosts = new Set((options.allowedHosts ?? []).map(normaliseHostName));
  const checkHostAlways = allowedHosts.size > 0;

  // The verdict on each Host value seen lately: parsing it as a URL costs more than the rest of
  // the guard, and a client sends the same Host on every request. Bounded, since Host is the
  // caller's to choose.
  const verdictByHost = new Map<string, boolean>();
  const hostnameAllowed = (host: string): boolean => {
    let verdict = verdictByHost.get(host);
    if (verdict === undefined) {
      const hostname = hostnameOf(host);
      verdict =
        hostname !== undefined && (isLoopbackHostname(hostname) || allowedHosts.has(hostname));
      if (verdictByHost.size >= HOST_VERDICTS_KEPT) verdictByHost.clear();
      verdictByHost.set(host, verdict);
    }
    return verdict;
  };

  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!checkHostAlways && !listensOnLoopbackOnly(req.socket)) return true;
    const host = addressedHost(req);
    // HTTP/1.0 without Host (HTTP/1.1 needs one, checked first): not a browser, which always
    // sends one.
    if (host === undefined) return true;
    return hostnameAllowed(host);
  };

  return (req, res) => {
    if (req.headers.host === undefined && req.httpVersionMajor * 10 + req.httpVersionMinor > 10) {
      // RFC 9112 3.2: an HTTP/1.1 request without Host is malformed. Node's own answer to it would
      // be an empty 400 (the server leaves that check here: `requireHostHeader: false`).
      const error = `An HTTP/${req.httpVersion} request must send a Host header`;
      writeJson(res, 400, JSON.stringify({ error }));
      return false;
    }
    if (hasSeveralHostLines(req)) {
      writeJson(
        res,
        400,
        JSON.stringify({ error: 'A request must send one Host header, not several' }),
      );
      return false;
    }
    if (!hostAllowed(req)) {
      return refuse(res, `Host '${shown(addressedHost(req) ?? '')}' is not allowed`);
    }
    if (corsOrigins.size > 0) setAnswerHeader(res, 'Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    let normalised: string | undefined;
    try {
      normalised = normaliseOrigin(origin);
    } catch {
      normalised = undefined; // `null` (sandboxed pages, file://) and anything malformed
    }
    if (normalised !== undefined && corsOrigins.has(normalised)) {
      setAnswerHeader(res, 'Access-Control-Allow-Origin', origin);
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        writeAnswerHead(res, 204, {
          'Access-Control-Allow-Methods': ALLOWED_METHODS,
          'Access-Control-Allow-Headers': ALLOWED_HEADERS,
          'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
          'Content-Length': '0',
        });
        res.end();
        return false;
      }
      setAnswerHeader(res, 'Access-Control-Expose-Headers', EXPOSED_HEADERS);
      return true;
    }
    if (normalised !== undefined && normalised === ownOrigin(req)) return true;
    return refuse(res, `Origin '${shown(origin)}' is not allowed`);
  };
}
