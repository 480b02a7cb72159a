/** The throwaway Redis: its own server and data, crash and restart for fault tests, nothing left behind. */
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { startLocalRedis, type LocalRedis } from '../src';

/** Sends one command in RESP and resolves with the raw reply, or the socket error's code. */
function command(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.once('connect', () => {
      const encoded = args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('');
      socket.write(`*${args.length}\r\n${encoded}`);
    });
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // A bulk reply is complete once its payload line has arrived too.
      const complete =
        reply.startsWith('$') && !reply.startsWith('$-1')
          ? reply.split('\r\n').length >= 3
          : reply.endsWith('\r\n');
      if (complete) {
        socket.destroy();
        resolve(reply);
      }
    });
  });
}

describe('startLocalRedis', () => {
  let first: LocalRedis;
  let second: LocalRedis;

  beforeAll(async () => {
    [first, second] = await Promise.all([startLocalRedis(), startLocalRedis()]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it('starts servers of their own, on loopback, each with its own data', async () => {
    expect(first.url).toBe(`redis://127.0.0.1:${first.port}`);
    expect(first.port).not.toBe(second.port);
    expect(await command(first.port, 'SET', 'k', 'one')).toBe('+OK\r\n');
    expect(await command(first.port, 'GET', 'k')).toBe('$3\r\none\r\n');
    expect(await command(second.port, 'GET', 'k')).toBe('$-1\r\n');
    expect(await command(first.port, 'CONFIG', 'GET', 'save')).toContain('save');
  });

  it('crashes on kill() and comes back empty on restart(), on the same port', async () => {
    await command(first.port, 'SET', 'kept', 'no');
    await first.kill();
    expect(await command(first.port, 'PING')).toBe('ECONNREFUSED');
    await first.restart();
    expect(await command(first.port, 'PING')).toBe('+PONG\r\n');
    expect(await command(first.port, 'GET', 'kept')).toBe('$-1\r\n');
  }, 30_000);

  it('freeze() leaves a server that accepts connections but answers nothing until thaw()', async () => {
    await first.freeze();
    const socket = connect({ host: '127.0.0.1', port: first.port });
    try {
      let reply = '';
      socket.on('data', (chunk) => (reply += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.write('PING\r\n');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(reply).toBe('');

      await first.thaw();
      const deadline = Date.now() + 5000;
      while (reply === '' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(reply).toBe('+PONG\r\n');
    } finally {
      socket.destroy();
      await first.thaw();
    }
  });

  it('stops a frozen server without waiting for it to be thawed', async () => {
    const redis = await startLocalRedis();
    await redis.freeze();
    // Never thawed: stop() could not wait for it.
    await redis.stop();
    expect(await command(redis.port, 'PING')).toBe('ECONNREFUSED');
  }, 30_000);

  it('stop() ends the server and removes its directory, and may be called twice', async () => {
    const redis = await startLocalRedis();
    const directory = (await command(redis.port, 'CONFIG', 'GET', 'dir')).split(
      '\r\n',
    )[4] as string;
    expect(existsSync(directory)).toBe(true);
    await Promise.all([redis.stop(), redis.stop()]);
    expect(await command(redis.port, 'PING')).toBe('ECONNREFUSED');
    expect(existsSync(directory)).toBe(false);
  }, 30_000);

  it('says why when the program cannot be started', async () => {
    await expect(startLocalRedis({ binary: '/nonexistent/redis-server' })).rejects.toThrow(
      /ENOENT|exited/,
    );
  });
});
