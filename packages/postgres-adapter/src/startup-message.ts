/**
 * The StartupMessage sqlgate sends: user, database and application_name only, rebuilt from pg's
 * (docs/decisions.md 10.1), which adds `options` and `replication` from the service's environment.
 */

/** Protocol 3.0, the version pg and sqlgate speak. */
const PROTOCOL_VERSION = 196608;
/** The parameters kept from pg's message. */
const KEPT = new Set(['user', 'database']);

/** The parameters of a StartupMessage (length, version, then name and value pairs, then a zero). */
function parametersOf(message: Buffer): [string, string][] | undefined {
  if (message.length < 9 || message.readInt32BE(0) !== message.length) return undefined;
  if (message.readInt32BE(4) !== PROTOCOL_VERSION) return undefined;
  const parameters: [string, string][] = [];
  let at = 8;
  while (at < message.length && message[at] !== 0) {
    const nameEnd = message.indexOf(0, at);
    const valueEnd = nameEnd < 0 ? -1 : message.indexOf(0, nameEnd + 1);
    if (valueEnd < 0) return undefined;
    parameters.push([
      message.toString('utf8', at, nameEnd),
      message.toString('utf8', nameEnd + 1, valueEnd),
    ]);
    at = valueEnd + 1;
  }
  return parameters;
}

/**
 * `message`, pg's StartupMessage, with only user and database kept and `applicationName` added;
 * anything else pg writes first (a message sqlgate cannot read as a StartupMessage) goes unchanged.
 */
export function sqlgateStartup(message: Buffer, applicationName: string): Buffer {
  const parameters = parametersOf(message);
  if (!parameters) return message;
  const sent = parameters.filter(([name]) => KEPT.has(name));
  sent.push(['application_name', applicationName]);
  const body = Buffer.from(sent.map(([name, value]) => `${name}\0${value}\0`).join('') + '\0');
  const header = Buffer.alloc(8);
  header.writeInt32BE(8 + body.length, 0);
  header.writeInt32BE(PROTOCOL_VERSION, 4);
  return Buffer.concat([header, body]);
}
