import { cacheKey } from '../../src/cache/cache-key';

const parts = { scope: 'scope', text: 'SELECT 1', rowMode: 'object' as const, maxRows: 10 };

describe('cacheKey', () => {
  it('keeps a short key as it is, a JSON array of its parts', () => {
    expect(JSON.parse(cacheKey(parts))).toEqual(['scope', 'SELECT 1', 'object', 10, null]);
  });

  it('hashes a long key, so keys stay short however long the SQL is', () => {
    const long = cacheKey({ ...parts, text: `SELECT '${'x'.repeat(1000)}'` });
    expect(long).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey({ ...parts, text: `SELECT '${'y'.repeat(1000)}'` })).not.toBe(long);
  });
});
