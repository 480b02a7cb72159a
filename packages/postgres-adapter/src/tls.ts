/**
 * sslMode → pg's `ssl` option (DECISIONS.md section 7). `prefer` starts like `require`; the pool
 * registry falls back to plain when the server refuses TLS, as libpq does.
 */
import type { SslMode } from '@sqlgate/core';
import type { ConnectionOptions } from 'node:tls';

export interface TlsSettings {
  /** PEM of the CA bundle trusted for `verify-full` (SSL_ROOT_CERT); Node's default CAs when absent. */
  rootCertificate?: string;
}

/** `false` for plain TCP, else the TLS options. */
export function tlsOptionsFor(
  mode: SslMode | 'prefer-plain',
  settings: TlsSettings,
): false | ConnectionOptions {
  switch (mode) {
    case 'disable':
    case 'prefer-plain':
      return false;
    case 'require':
    case 'prefer':
      // SPEC: with require the certificate is not verified, so self-signed certificates are accepted.
      return { rejectUnauthorized: false };
    case 'verify-full':
      // Node verifies the chain and the host name (checkServerIdentity) when rejectUnauthorized is set.
      return {
        rejectUnauthorized: true,
        ...(settings.rootCertificate ? { ca: settings.rootCertificate } : {}),
      };
  }
}

/** pg's error when the server answers the SSLRequest with 'N'. */
export function isTlsRefused(error: unknown): boolean {
  return error instanceof Error && /does not support SSL/i.test(error.message);
}
