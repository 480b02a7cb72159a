/**
 * Which targets callers may reach (ALLOWED_TARGETS). Implemented outside core because deciding
 * may need name resolution; core asks before every connection it opens for a caller.
 */
import type { ConnectionTarget } from './connections';

export interface TargetPolicy {
  /**
   * Rejects with a `SqlgateError` (TARGET_NOT_ALLOWED, or a ConnectionError when the name cannot be
   * resolved). Resolves to the target to connect to: a policy that resolved the host returns it with
   * `address` set to the address it checked, so the connection cannot go anywhere else (a DNS answer
   * that changes between check and connect). Resolving to nothing means `target` as it is.
   */
  check(target: ConnectionTarget): Promise<ConnectionTarget | void>;
}
