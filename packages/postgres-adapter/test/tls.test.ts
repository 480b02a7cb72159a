/**
 * verify-full checks the certificate against the host the caller named, IP addresses included. A
 * stand-in server accepts PostgreSQL's SSLRequest and completes the TLS handshake with a certificate
 * that names only `localhost`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TLSSocket } from 'node:tls';
import type { ConnectionTarget } from '@sqlgate/core';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { failureOf } from './support';

let directory: string;
let certificate: string;
let key: string;
let server: Server;
const sockets = new Set<Socket>();
let connections: PostgresConnections;

/** Answers the SSLRequest with 'S', shakes hands, then hangs up. */
function startTlsStandIn(): Promise<Server> {
  const standIn = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      socket.write('S');
      const secure = new TLSSocket(socket, { isServer: true, key, cert: certificate });
      secure.on('error', () => undefined);
      secure.on('secure', () => secure.destroy());
    });
  });
  return new Promise((resolve) => standIn.listen(0, '127.0.0.1', () => resolve(standIn)));
}

beforeAll(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'sqlgate-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-x509',
      '-days',
      '1',
      '-nodes',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      path.join(directory, 'key.pem'),
      '-out',
      path.join(directory, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  certificate = readFileSync(path.join(directory, 'cert.pem'), 'utf8');
  key = readFileSync(path.join(directory, 'key.pem'), 'utf8');
  server = await startTlsStandIn();
  connections = createPostgresConnections({ rootCertificate: certificate, connectTimeoutMs: 2000 });
});
afterAll(async () => {
  await connections.close();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(directory, { recursive: true, force: true });
});

const targetAt = (host: string): ConnectionTarget => ({
  host,
  port: (server.address() as AddressInfo).port,
  user: 'nobody',
  password: 'irrelevant',
  database: 'nothing',
  sslMode: 'verify-full',
});

it('an IP address the certificate does not name is refused, for pools and checks alike', async () => {
  expect(await failureOf(connections.acquire(targetAt('127.0.0.1')))).toMatchObject({
    systemCode: 'ERR_TLS_CERT_ALTNAME_INVALID',
  });
  expect(await failureOf(connections.check(targetAt('127.0.0.1')))).toMatchObject({
    systemCode: 'ERR_TLS_CERT_ALTNAME_INVALID',
  });
});

it('the name the certificate holds passes verification (the stand-in then hangs up)', async () => {
  const failure = await failureOf(connections.acquire(targetAt('localhost')));
  expect(failure).toBeDefined();
  expect((failure as { systemCode: string }).systemCode).not.toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  expect((failure as { systemCode: string }).systemCode).not.toMatch(/CERT|SELF_SIGNED/);
});
