import { parseAccessConfig } from '../src/access/config-file';
import { ConfigError } from '../src/config';

const KEY = { id: 'k', secret: 'key-0123456789abcdef', connections: ['app'] };
const PRIMARY = 'postgresql://u:p@primary.internal:5432/app';

function read(app: Record<string, unknown>, env: Record<string, string> = {}) {
  return parseAccessConfig({ connections: { app }, keys: [KEY] }, env, () => 'unused');
}

describe('CONFIG_FILE replicas', () => {
  test('replica URLs are read as url is, secrets too; maxReplicaLagMs defaults to 1000', () => {
    const config = read(
      { url: PRIMARY, replicas: ['postgresql://u:p@r1.internal/app', { env: 'R2' }] },
      { R2: 'postgresql://u:p@r2.internal:6432/app' },
    );
    const app = config.connections.get('app')!;
    expect(app.replicas?.map((replica) => `${replica.host}:${replica.port}`)).toEqual([
      'r1.internal:5432',
      'r2.internal:6432',
    ]);
    expect(app.maxReplicaLagMs).toBe(1000);
    expect(
      read({ url: PRIMARY, replicas: [], maxReplicaLagMs: 50 }).connections.get('app'),
    ).toMatchObject({ replicas: [], maxReplicaLagMs: 50 });
  });

  test('a connection without replicas has none', () => {
    expect(read({ url: PRIMARY }).connections.get('app')).not.toHaveProperty('replicas');
  });

  test('mistakes are named by their place, never showing a URL', () => {
    let message = '';
    try {
      read({
        url: PRIMARY,
        replicas: ['mysql://u:secret@r/x', { env: 'UNSET' }],
        maxReplicaLagMs: 0,
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toContain('connections.app.replicas[0]');
    expect(message).toContain('connections.app.replicas[1]');
    expect(message).toContain('connections.app.maxReplicaLagMs');
    expect(message).not.toContain('secret');
    expect(() => read({ url: PRIMARY, replicas: 'postgresql://r/x' })).toThrow(
      /connections\.app\.replicas: must be a list/,
    );
  });
});
