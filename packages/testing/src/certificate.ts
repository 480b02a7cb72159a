import { chmod, chown, readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { runCommand, type ProcessOwner } from './run-command';

/** A self-signed server certificate and its key, as files and as PEM. */
export interface SelfSignedCertificate {
  certificateFile: string;
  keyFile: string;
  /** The certificate PEM; being self-signed, it is also the CA a client must trust. */
  certificatePem: string;
}

/** Options of {@link createSelfSignedCertificate}. */
export interface SelfSignedCertificateOptions {
  /** Where server.crt and server.key are written. */
  directory: string;
  /** Names and addresses the certificate is valid for, besides localhost and 127.0.0.1. */
  hostnames?: readonly string[];
  /** Account that must own the files (PostgreSQL insists its key is owned by the server account). */
  owner?: ProcessOwner;
}

function subjectAltNames(hostnames: readonly string[]): string {
  const unique = [...new Set(['localhost', '127.0.0.1', '::1', ...hostnames])];
  return unique.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(',');
}

/**
 * Creates a certificate valid for two days with the openssl CLI. A P-256 key is used because it
 * is generated in milliseconds, where RSA keys noticeably slow every start.
 */
export async function createSelfSignedCertificate(
  options: SelfSignedCertificateOptions,
): Promise<SelfSignedCertificate> {
  const certificateFile = path.join(options.directory, 'server.crt');
  const keyFile = path.join(options.directory, 'server.key');
  try {
    await runCommand(
      'openssl',
      [
        'req',
        '-new',
        '-x509',
        '-days',
        '2',
        '-nodes',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-subj',
        '/CN=localhost',
        '-addext',
        `subjectAltName=${subjectAltNames(options.hostnames ?? [])}`,
        '-keyout',
        keyFile,
        '-out',
        certificateFile,
      ],
      { cwd: options.directory, timeoutMs: 30_000 },
    );
  } catch (error) {
    const missing = (error as Error).message.includes('ENOENT');
    throw new Error(
      missing
        ? 'openssl is not installed (needed for the TLS certificate); install it or pass tls: false'
        : `could not create a TLS certificate: ${(error as Error).message}`,
    );
  }
  // PostgreSQL refuses a key readable by group or others.
  await chmod(keyFile, 0o600);
  if (options.owner) {
    await chown(keyFile, options.owner.uid, options.owner.gid);
    await chown(certificateFile, options.owner.uid, options.owner.gid);
  }
  return { certificateFile, keyFile, certificatePem: await readFile(certificateFile, 'utf8') };
}
