/**
 * Which targets callers may reach (ALLOWED_TARGETS). Implemented outside core because deciding
 * may need name resolution; core asks before every connection it opens for a caller.
 */
import type { ConnectionTarget } from './connections';

export interface TargetPolicy {
  /** Rejects with a `SqlgateError` (TARGET_NOT_ALLOWED, or a ConnectionError when the name cannot be resolved). */
  check(target: ConnectionTarget): Promise<void>;
}
