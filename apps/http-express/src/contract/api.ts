/** What the HTTP API says about itself as a whole: title, overview, tags, the statistics token. */
export const API_INFO = {
  title: 'sqlgate',
  version: '0.1.0',
  description:
    'Runs SQL against a PostgreSQL server named in each request, and reports on its connection pools and result ' +
    'cache. Every response is JSON, errors included. Unknown paths answer 404 and known paths with another method ' +
    'answer 405 with an Allow header (see components.responses NotFound and MethodNotAllowed). A body larger than ' +
    'MAX_BODY_BYTES (1 MiB by default) answers 413. Connecting to a target gives up after CONNECT_TIMEOUT_MS ' +
    '(configurable, 5000 ms by default).',
  license: { name: 'MIT', identifier: 'MIT' },
};

export const API_TAGS: { name: string; description: string }[] = [
  { name: 'query', description: 'Running SQL.' },
  {
    name: 'sessions',
    description:
      'Transactions across requests: a session keeps one pooled connection for the requests that name it.',
  },
  { name: 'connection', description: 'Checking a target.' },
  {
    name: 'statistics',
    description: 'Connection pools and the result cache; no database is touched.',
  },
  { name: 'service', description: 'The service itself.' },
];

/** The scheme of the statistics endpoints (`statsToken: true` routes). */
export const STATS_TOKEN_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  description:
    'Needed by the statistics endpoints only when the server runs with STATS_TOKEN set (off by default): ' +
    'Authorization: Bearer <STATS_TOKEN>.',
};
