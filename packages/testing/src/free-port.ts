import { createServer } from 'node:net';

/**
 * Asks the kernel for a port that is free right now on `host`, by binding port 0 and closing.
 * Another process may take it before the caller binds it, so callers retry on "address in use".
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`could not read the port bound on ${host}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
