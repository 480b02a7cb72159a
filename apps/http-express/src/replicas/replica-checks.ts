/**
 * The lag check of one named connection's replicas (docs/decisions.md 13): every interval, the
 * primary's WAL position, then each replica's recovery state, replayed position and the age of its
 * last replayed transaction, through the service's own pools. A replica that cannot be reached, has
 * been promoted or is too far behind is left out until a check finds it well again.
 */
import {
  replicaLagMs,
  walPositionOf,
  type ConnectionProvider,
  type ConnectionTarget,
  type ReplicaView,
} from '@sqlgate/core';

/** What the checks report, for metrics: a replica's lag as seen (undefined: not known). */
export type LagListener = (connection: string, replica: number, lagMs: number | undefined) => void;

interface ReplicaState {
  target: ConnectionTarget;
  usable: boolean;
  lagMs: number | undefined;
  replayPosition: bigint | undefined;
}

const REPLICA_CHECK = `SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,
  (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::float8`;
const REPLAYED = 'SELECT pg_last_wal_replay_lsn()::text';
const PRIMARY_POSITION = 'SELECT pg_current_wal_lsn()::text';
/** Where a consistency token's position comes from (replica-routing.ts). */
export const PRIMARY_INSERTED = 'SELECT pg_current_wal_insert_lsn()::text';

/** The first row of `sql` on `target`, or undefined when it could not be had. */
export async function firstRow(
  connections: ConnectionProvider,
  target: ConnectionTarget,
  sql: string,
): Promise<readonly unknown[] | undefined> {
  const acquired = await connections.acquire(target);
  if (!acquired.ok) return undefined;
  const connection = acquired.value;
  const ran = await connection.run(sql, { rowMode: 'array', maxRows: 1 });
  connection.release(ran.ok ? {} : { destroy: true });
  return ran.ok ? (ran.value.rows[0] as readonly unknown[] | undefined) : undefined;
}

/** A named connection's primary and replicas, what is checked, and who hears of the lag. */
export interface ReplicaSet {
  name: string;
  primary: ConnectionTarget;
  replicas: readonly ConnectionTarget[];
  maxLagMs: number;
}

export class ReplicaChecks {
  readonly replicas: ReplicaState[];
  readonly name: string;
  readonly primary: ConnectionTarget;
  readonly maxLagMs: number;
  private primaryPosition: bigint | undefined;
  /** The highest insert position read from the primary, and a read of it under way. */
  private primaryInserted = 0n;
  private readingInserted: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  constructor(
    { name, primary, replicas, maxLagMs }: ReplicaSet,
    private readonly connections: ConnectionProvider,
    private readonly onLag: LagListener,
  ) {
    this.name = name;
    this.primary = primary;
    this.maxLagMs = maxLagMs;
    // Each replica's pool is its own, named after the connection: never by its URL.
    this.replicas = replicas.map((target, index) => ({
      target: { ...target, name: `${name}/replica-${index}` },
      usable: false,
      lagMs: undefined,
      replayPosition: undefined,
    }));
  }

  /** Checks now, then every `intervalMs`; the timer never keeps the process alive. */
  start(intervalMs: number): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check of all replicas; a check still running is awaited instead of a second one. */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  /** The replica whose pool is named `name`, if one is. */
  replicaNamed(name: string | undefined): ReplicaState | undefined {
    return this.replicas.find((replica) => replica.target.name === name);
  }

  /** Left out until a check finds it well again (a request lost its connection to it). */
  leaveOut(replica: ReplicaState): void {
    replica.usable = false;
  }

  /** What the checks last saw, with each replica's pool's load now. */
  views(busyOf: (target: ConnectionTarget) => number): ReplicaView[] {
    return this.replicas.map((replica, index) => ({
      index,
      usable: replica.usable,
      lagMs: replica.lagMs,
      replayPosition: replica.replayPosition,
      busy: busyOf(replica.target),
    }));
  }

  /** Reads again how far the usable replicas have replayed: a consistency wait polls this. */
  async refreshReplayed(): Promise<void> {
    await Promise.all(
      this.replicas
        .filter((replica) => replica.usable)
        .map(async (replica) => {
          const row = await firstRow(this.connections, replica.target, REPLAYED);
          const position = row ? walPositionOf(String(row[0])) : undefined;
          if (position !== undefined) replica.replayPosition = position;
        }),
    );
  }

  /**
   * Whether the primary has written up to `position`: a consistency token names a position the
   * primary reached. One it has not reached was not made by sqlgate (a forged or foreign token),
   * and no replica will ever replay it. Read again only when the last position seen is behind.
   */
  async primaryHasReached(position: bigint): Promise<boolean> {
    if (this.primaryInserted >= position) return true;
    this.readingInserted ??= firstRow(this.connections, this.primary, PRIMARY_INSERTED)
      .then((row) => {
        const inserted = row ? walPositionOf(String(row[0])) : undefined;
        if (inserted !== undefined && inserted > this.primaryInserted) {
          this.primaryInserted = inserted;
        }
      })
      .finally(() => {
        this.readingInserted = undefined;
      });
    await this.readingInserted;
    return this.primaryInserted >= position;
  }

  private async checkAll(): Promise<void> {
    const row = await firstRow(this.connections, this.primary, PRIMARY_POSITION);
    this.primaryPosition = row ? walPositionOf(String(row[0])) : undefined;
    await Promise.all(this.replicas.map((replica, index) => this.checkOne(replica, index)));
  }

  private async checkOne(replica: ReplicaState, index: number): Promise<void> {
    const row = await firstRow(this.connections, replica.target, REPLICA_CHECK);
    const inRecovery = row?.[0] === true;
    const replayPosition = row && typeof row[1] === 'string' ? walPositionOf(row[1]) : undefined;
    const replayAgeMs = row && typeof row[2] === 'number' ? row[2] : undefined;
    replica.usable = inRecovery;
    replica.replayPosition = replayPosition;
    replica.lagMs = inRecovery
      ? replicaLagMs({ primaryPosition: this.primaryPosition, replayPosition, replayAgeMs })
      : undefined;
    this.onLag(this.name, index, replica.lagMs);
  }
}
