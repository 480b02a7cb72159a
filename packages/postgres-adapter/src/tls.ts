/**
 * sslMode → a ServerSocket's TLS options (docs/decisions.md 7): `require` and `prefer` do not
 * verify (`prefer` falls back to plain); `verify-full` verifies the chain and the host name.
 */
import type { SslMode } from '@sqlgate/core';
import type { ConnectionOptions } from 'node:tls';

export interface TlsSettings {
  /** PEM of the CA bundle trusted for `verify-full` (SSL_ROOT_CERT); Node's default CAs when absent. */
  rootCertificate?: string;
}

/** `false` for plain TCP, else the TLS options. */
export function tlsOptionsFor(mode: SslMode, settings: TlsSettings): false | ConnectionOptions {
  switch (mode) {
    case 'disable':
      return false;
    case 'require':
    case 'prefer':
      // With require the certificate is not verified, so self-signed certificates are accepted.
      return { rejectUnauthorized: false };
    case 'verify-full':
      // Node verifies the chain and the host name (checkServerIdentity) when rejectUnauthorized is set.
      return {
        rejectUnauthorized: true,
        ...(settings.rootCertificate ? { ca: settings.rootCertificate } : {}),
      };
  }
}
