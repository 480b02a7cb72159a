/**
 * Keyed hashes of passwords (HMAC-SHA-256), remembered: pool keys and cache scopes need one per
 * request. The key is random per process unless given (instances sharing a cache need one).
 */
import { createHmac, randomBytes } from 'node:crypto';

const MAX_REMEMBERED = 1000;

export class PasswordDigests {
  private readonly key: Uint8Array | string;
  private readonly remembered = new Map<string, string>();

  constructor(key?: Uint8Array | string) {
    this.key = key ?? randomBytes(32);
  }

  /** The digest of `password`, base64. */
  of(password: string): string {
    let digest = this.remembered.get(password);
    if (digest === undefined) {
      digest = createHmac('sha256', this.key).update(password).digest('base64');
      if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
      this.remembered.set(password, digest);
    }
    return digest;
  }
}
