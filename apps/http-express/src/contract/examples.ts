/** Example bodies of POST /api/query, shown in the OpenAPI document. */
export const QUERY_EXAMPLES = {
  single: {
    summary: 'One statement',
    value: {
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      password: 'secret',
      database: 'test',
      sql: 'SELECT 1 AS one',
    },
  },
  transaction: {
    summary: 'Writes, wrapped in one transaction',
    value: {
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      database: 'test',
      sql: "INSERT INTO items (name) VALUES ('a'); SELECT count(*) FROM items;",
      isolationLevel: 'serializable',
    },
  },
  options: {
    summary: 'Parameters, array rows, a cached result and a time limit',
    value: {
      host: '127.0.0.1',
      port: '5432',
      user: 'postgres',
      database: 'test',
      sql: 'SELECT id, name FROM items WHERE id = $1',
      params: [42],
      rowMode: 'array',
      maxRows: 100,
      timeoutMs: 2000,
      cache: { ttlMs: 30000 },
    },
  },
};
