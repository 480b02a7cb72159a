/**
 * The `sqlgate` command's arguments. The server itself is configured by environment variables
 * (docs/decisions.md 9); the arguments only choose what the command does. An argument it does not
 * know stops it: a misspelt `--demo` must not start an open server instead.
 */

export type CliCommand = 'serve' | 'demo' | 'help' | 'version';

export class CliArgumentError extends Error {}

const FLAGS: Record<string, CliCommand> = {
  '--demo': 'demo',
  '--help': 'help',
  '-h': 'help',
  '--version': 'version',
  '-v': 'version',
};

/** Exit status of a command line the program cannot take, as for other Unix commands. */
export const USAGE_EXIT_CODE = 2;

/**
 * What the arguments (without node and the script) ask for. `--help` wins over the others, then
 * `--version`, so that either can be added to any command line; `--demo` only starts a demo.
 */
export function commandOf(args: readonly string[]): CliCommand {
  const asked = new Set<CliCommand>();
  for (const arg of args) {
    const command = FLAGS[arg];
    if (command === undefined) {
      throw new CliArgumentError(
        `unknown argument '${arg}'; sqlgate takes --demo, --help or --version, and is configured by environment variables (sqlgate --help)`,
      );
    }
    asked.add(command);
  }
  for (const command of ['help', 'version', 'demo'] as const) {
    if (asked.has(command)) return command;
  }
  return 'serve';
}

export const USAGE = `Usage: sqlgate [--demo | --help | --version]

Runs SQL against PostgreSQL over HTTP: POST /api/query with the SQL and the connection
settings of a PostgreSQL server; a SQL console at /.

Options:
  --demo         try it without a PostgreSQL: an embedded PostgreSQL in memory (PGlite),
                 sqlgate on 127.0.0.1 (PORT, default 3000), the console at its URL, and
                 requests without connection fields run on the embedded database
  -h, --help     print this help and exit
  -v, --version  print the version and exit

Configuration (environment variables, all optional):
  PORT=3000              port to listen on
  HOSTNAME=0.0.0.0       address to listen on; 127.0.0.1 for this machine only
  ALLOWED_TARGETS        comma list of the databases callers may reach (host, host:port,
                         IP address, CIDR range); without it, callers reach any host and port
                         this machine can: set it whenever others can reach sqlgate
  POOL_MAX=10            connections per pool (one pool per target and credentials)
  MAX_ROWS=10000         rows per statement unless the request says otherwise
  LOG_LEVEL=info         fatal, error, warn, info, debug, trace or silent
  CONSOLE=on             the SQL console at /
  STATS_TOKEN, METRICS_TOKEN, CORS_ORIGINS, ALLOWED_HOSTS, WORKERS, QUERY_CACHE_*, ...
                         see the README of @sqlgate/http-express for every variable
`;
