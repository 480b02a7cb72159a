/**
 * ALLOWED_TARGETS: a comma list of host names, host:port, IP addresses and CIDR ranges. A requested
 * host is resolved first and every address it resolves to must be allowed, so a name that resolves
 * to a denied address is denied. Names in the list are resolved at check time too.
 *
 * The checked target carries the address that was checked, and the connection goes there: a name
 * whose DNS answer changes between the check and the connect (DNS rebinding) cannot send the
 * connection to an address that was never checked.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import {
  ConnectionError,
  ErrorCodes,
  SqlgateError,
  type ConnectionTarget,
  type TargetPolicy,
  withFields,
} from '@sqlgate/core';

interface Rule {
  /** Only this port, when set. */
  port?: number;
  /** Addresses the rule covers, or a name to resolve. */
  range?: BlockList;
  name?: string;
}

export class InvalidAllowedTargets extends Error {}

/** `[::1]:5432`, `10.0.0.0/8`, `db.internal:5432`, `127.0.0.1`... */
function parseRule(item: string): Rule {
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(item);
  if (cidr) {
    const [, address = '', bits = ''] = cidr;
    const family = isIP(address);
    if (family === 0 || Number(bits) > (family === 4 ? 32 : 128))
      throw new InvalidAllowedTargets(`'${item}' is not a CIDR range`);
    const range = new BlockList();
    range.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    return { range };
  }
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
  const [host, portText] = bracketed
    ? [bracketed[1] ?? '', bracketed[2]]
    : isIP(item) === 6
      ? [item, undefined]
      : (item.split(':') as [string, string | undefined]);
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    throw new InvalidAllowedTargets(`'${item}' has an invalid port`);
  }
  const family = isIP(host);
  if (family !== 0) {
    const range = new BlockList();
    range.addAddress(host, family === 4 ? 'ipv4' : 'ipv6');
    return { range, ...(port !== undefined ? { port } : {}) };
  }
  if (!/^[A-Za-z0-9.-]+$/.test(host))
    throw new InvalidAllowedTargets(`'${item}' is not a host name, address or CIDR range`);
  return { name: host.toLowerCase(), ...(port !== undefined ? { port } : {}) };
}

/** Every address a host name resolves to, in the resolver's order. */
export type ResolveAll = (host: string) => Promise<string[]>;

const systemResolveAll: ResolveAll = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

async function addressesOf(host: string, resolveAll: ResolveAll): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  try {
    const addresses = await resolveAll(host);
    if (addresses.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
    return addresses;
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'ENOTFOUND';
    throw new ConnectionError(ErrorCodes.CONNECTION_FAILED, `Cannot resolve host '${host}'`, code, {
      cause: error,
    });
  }
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 4 ? 'ipv4' : 'ipv6';
}

export interface AllowedTargetsOptions {
  /** Name resolution; the system resolver (getaddrinfo) when absent. Injectable for tests. */
  resolveAll?: ResolveAll;
}

/**
 * Parses ALLOWED_TARGETS; throws InvalidAllowedTargets naming the bad item, or saying that the list
 * names none. The policy's `check`
 * resolves to the target with `address` set to the first checked address.
 */
export function createAllowedTargets(
  list: string,
  options: AllowedTargetsOptions = {},
): TargetPolicy {
  const resolveAll = options.resolveAll ?? systemResolveAll;
  const rules = list
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map(parseRule);
  // A list of empty entries (`,,`) would refuse every target without a word: never what is meant.
  if (rules.length === 0) {
    throw new InvalidAllowedTargets(
      `'${list.slice(0, 40)}' names no target (leave it unset to allow every target)`,
    );
  }

  async function allows(rule: Rule, address: string, port: number): Promise<boolean> {
    if (rule.port !== undefined && rule.port !== port) return false;
    if (rule.range) return rule.range.check(address, familyOf(address));
    const resolved: string[] = await addressesOf(rule.name as string, resolveAll).catch(() => []);
    return resolved.includes(address);
  }

  return {
    async check(target: ConnectionTarget): Promise<ConnectionTarget> {
      const addresses = await addressesOf(target.host, resolveAll);
      for (const address of addresses) {
        let allowed = false;
        for (const rule of rules) {
          if (await allows(rule, address, target.port)) {
            allowed = true;
            break;
          }
        }
        if (!allowed) throw new SqlgateError(ErrorCodes.TARGET_NOT_ALLOWED, 'Target not allowed');
      }
      // Pinned: the connection must not resolve the name again (docs/decisions.md 9, ALLOWED_TARGETS).
      return withFields(target, { address: addresses[0]! });
    },
  };
}
