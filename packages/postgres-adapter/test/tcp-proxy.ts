/**
 * A TCP proxy in front of PostgreSQL that can break the connections it carries in the ways real
 * networks and servers do, at a moment a test chooses.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { backend, encode } from '@sqlgate/testing';

/** What happens to a connection when the client next sends something. */
type Fault =
  /** Forward as usual. */
  | 'none'
  /** The server's host rebooted: the peer no longer knows the connection and answers with a reset. */
  | 'forgotten'
  /** The server reads the request and closes without a word. */
  | 'silent-close'
  /** What the server sent is held back and delivered only after the client's next request. */
  | 'late-delivery'
  /**
   * A pooler's own FATAL (PgBouncer's "server conn crashed?", 08P01): the request reaches the
   * server, which runs it, and the client gets the pooler's error instead of the server's answers.
   */
  | 'pooler-fatal';

interface Link {
  client: Socket;
  upstream: Socket;
  fault: Fault;
  held: Buffer[];
  upstreamEnded: boolean;
}

export class TcpProxy {
  private readonly links = new Set<Link>();
  /** Connections accepted while there was nowhere to route them. */
  private readonly unanswered = new Set<Socket>();
  /** Where connections made from now on go; none: they are accepted and never answered. */
  private upstream: { host: string; port: number } | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(host: string, port: number): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new TcpProxy(server, (server.address() as AddressInfo).port);
    proxy.upstream = { host, port };
    server.on('connection', (client) => {
      if (proxy.upstream) proxy.carry(client, proxy.upstream.host, proxy.upstream.port);
      else {
        proxy.unanswered.add(client);
        client.on('error', () => undefined);
        client.on('close', () => proxy.unanswered.delete(client));
      }
    });
    return proxy;
  }

  /**
   * Carries the connections made from now on to another server, at the same address and port of
   * the proxy: a name or an address moved to another server. Open connections are closed, as the
   * old server's would be.
   */
  retarget(host: string, port: number): void {
    this.routeNewConnections({ host, port });
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
  }

  /**
   * Connections made from now on go to `upstream` (another server at the same address, such as a
   * pooler put in front), or, without one, are accepted and never answered (a server too slow to
   * answer). Connections open now stay where they are.
   */
  routeNewConnections(upstream: { host: string; port: number } | undefined): void {
    this.upstream = upstream;
  }

  /** Connections open now; later ones are carried faithfully. */
  get openLinks(): number {
    return [...this.links].filter((link) => !link.client.destroyed).length;
  }

  /** Every connection open now gets `fault` when its client next sends something. */
  breakOpenConnections(fault: Exclude<Fault, 'none'>): void {
    for (const link of this.links) {
      link.fault = fault;
      if (fault === 'forgotten') link.upstream.destroy();
    }
  }

  /** True once the server has closed every connection whose delivery is held back. */
  get heldConnectionsEnded(): boolean {
    return [...this.links]
      .filter((link) => link.fault === 'late-delivery')
      .every((link) => link.upstreamEnded);
  }

  async close(): Promise<void> {
    for (const client of this.unanswered) client.destroy();
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private carry(client: Socket, host: string, port: number): void {
    const upstream = connect({ host, port });
    const link: Link = { client, upstream, fault: 'none', held: [], upstreamEnded: false };
    this.links.add(link);
    const forget = (): void => {
      this.links.delete(link);
    };
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('close', () => {
      upstream.destroy();
      forget();
    });
    upstream.on('data', (chunk: Buffer) => {
      if (link.fault === 'late-delivery') link.held.push(chunk);
      else if (link.fault === 'none') client.write(chunk);
    });
    upstream.on('end', () => {
      link.upstreamEnded = true;
      if (link.fault === 'none') client.end();
    });
    client.on('data', (chunk: Buffer) => this.fromClient(link, chunk));
  }

  private fromClient(link: Link, chunk: Buffer): void {
    switch (link.fault) {
      case 'none':
        link.upstream.write(chunk);
        return;
      case 'forgotten':
        link.client.resetAndDestroy();
        return;
      case 'silent-close':
        link.upstream.destroy();
        link.client.end();
        return;
      case 'late-delivery':
        // The request is lost with the server; what the server said before it went reaches the client now.
        for (const held of link.held) link.client.write(held);
        link.client.end();
        return;
      case 'pooler-fatal':
        link.upstream.write(chunk);
        link.client.end(poolerFatal());
        return;
    }
  }
}

/** An ErrorResponse as PgBouncer sends it when its server connection broke. */
function poolerFatal(): Buffer {
  return encode([
    backend.errorResponse({ S: 'FATAL', V: 'FATAL', C: '08P01', M: 'server conn crashed?' }),
  ]);
}
