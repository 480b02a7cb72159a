/**
 * The port through which a named connection's requests reach its replicas (docs/decisions.md 13).
 * Core decides whether a request may run on a standby; the implementation knows the replicas, how
 * far behind they are, and where a request goes.
 */
import type { ConnectionTarget } from '../ports/connections';
import type { ServedBy } from './replica-choice';

export interface ReadRoute {
  /** Where the request runs: the primary's target, or a replica's. */
  target: ConnectionTarget;
  servedBy: ServedBy;
}

/** What a streamed answer's head can say of its routing, known before its first row. */
export interface StreamRoute {
  servedBy: ServedBy;
  /** The request may write: its consistency token follows the rows. */
  mayHaveWritten: boolean;
}

export interface RouteRequest {
  /** Every statement may run on a standby (replica-choice.ts). */
  runsOnStandby: boolean;
  /** The caller's consistency token: a replica serves only once it has replayed that write. */
  consistencyToken?: string;
  /** The request's own timeoutMs: a consistency wait never outlasts it. */
  timeoutMs?: number;
  /** True once the caller went away or cancelled: a consistency wait ends at once. */
  stopped?: () => boolean;
}

export interface ReadRouting {
  /** Undefined when the target has no replicas: the request runs as it would without them. */
  route(
    target: ConnectionTarget,
    request: RouteRequest,
  ): Promise<ReadRoute> | ReadRoute | undefined;
  /**
   * The consistency token of what the primary of `target` has committed so far; undefined when it
   * could not be read (the answer then carries none).
   */
  tokenAfterWrite(target: ConnectionTarget): Promise<string | undefined>;
  /**
   * A request on this replica's target lost or could not get its connection: it is left out until
   * a check finds it well again. The request is run again on the primary.
   */
  replicaFailed?(target: ConnectionTarget): void;
  /** Stops the lag checks. */
  close(): void;
}
