export {
  chooseReplica,
  eligibleReplicas,
  replicaLagMs,
  requestRunsOnStandby,
  type ReplicaRule,
  type ReplicaView,
  type ServedBy,
} from './replica-choice';
export type { ReadRoute, ReadRouting, RouteRequest, StreamRoute } from './read-routing';
export { consistencyTokenOf, walPositionOf, walPositionOfToken } from './wal-position';
