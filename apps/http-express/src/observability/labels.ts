/**
 * Bounded names for what a caller controls (docs/decisions.md 10.25): metric labels and span
 * names must not grow with, or repeat, whatever a request sends.
 */
import { createHash } from 'node:crypto';

/** First keywords shown as they are; any other is `OTHER`. */
const KNOWN_COMMANDS = new Set(
  (
    'SELECT INSERT UPDATE DELETE MERGE WITH VALUES TABLE EXPLAIN SHOW SET RESET BEGIN START COMMIT ' +
    'END ROLLBACK ABORT SAVEPOINT RELEASE PREPARE EXECUTE DEALLOCATE DECLARE FETCH MOVE CLOSE ' +
    'CREATE ALTER DROP TRUNCATE COMMENT GRANT REVOKE ANALYZE VACUUM CLUSTER REINDEX REFRESH LOCK ' +
    'COPY DO CALL LISTEN NOTIFY UNLISTEN DISCARD CHECKPOINT LOAD SECURITY IMPORT REASSIGN'
  ).split(' '),
);

export function commandLabel(command: string): string {
  return KNOWN_COMMANDS.has(command) ? command : 'OTHER';
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** Node accepts some thirty methods; the ones HTTP APIs use are shown, the others are `OTHER`. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : 'OTHER';
}

/** `23505` → `23`; anything that is not a SQLSTATE → `unknown`. */
export function sqlStateClass(sqlState: string): string {
  return /^[0-9A-Z]{5}$/.test(sqlState) ? sqlState.slice(0, 2) : 'unknown';
}

const MAX_POOL_LABEL = 200;
const DIGEST_MARK = '…#';
/** Labels of ids seen, so a scrape hashes each long id once; as many as POOL_TARGETS_MAX allows. */
const poolLabels = new Map<string, string>();
const MAX_REMEMBERED_LABELS = 10_000;

/**
 * A pool id as a label: as it is up to 200 characters, longer ones (a caller may send a user name
 * of a megabyte) cut, with a digest of the whole id so that two pools never share a series. A
 * short id that holds the digest mark is given the digest form too, so it cannot spell out the
 * label of another.
 */
export function poolLabel(poolId: string): string {
  if (poolId.length <= MAX_POOL_LABEL && !poolId.includes(DIGEST_MARK)) return poolId;
  let label = poolLabels.get(poolId);
  if (label === undefined) {
    const digest = createHash('sha256').update(poolId).digest('hex').slice(0, 16);
    label = `${poolId.slice(0, MAX_POOL_LABEL - 20)}${DIGEST_MARK}${digest}`;
    if (poolLabels.size >= MAX_REMEMBERED_LABELS) poolLabels.clear();
    poolLabels.set(poolId, label);
  }
  return label;
}

const MAX_NAME = 200;

/** A caller's name (a database) as an attribute: up to 200 characters. */
export function boundedName(name: string): string {
  return name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME - 1)}…`;
}
