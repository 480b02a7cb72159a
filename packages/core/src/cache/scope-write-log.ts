/**
 * When each target was last written through the service: a read that began before a write and
 * ends after its invalidation does not put its older result into the cache.
 */

/** How many targets are remembered individually; older ones are folded into one conservative mark. */
const DEFAULT_MAX_SCOPES = 10_000;

/** An opaque point in the sequence of writes, taken before a read runs. */
export type WriteSequence = number;

export class ScopeWriteLog {
  private sequence = 0;
  /** Scope → sequence number of its last write, oldest write first. */
  private readonly lastWrite = new Map<string, number>();
  /** Latest sequence number among forgotten scopes: any of them may have been written up to here. */
  private forgottenUpTo = 0;

  constructor(private readonly maxScopes: number = DEFAULT_MAX_SCOPES) {}

  /** The current point; pass it to `writtenSince` after the read. */
  mark(): WriteSequence {
    return this.sequence;
  }

  /** Records a write to `scope`. */
  recordWrite(scope: string): void {
    this.sequence += 1;
    // Delete first so the scope moves to the end: the map stays ordered by last write.
    this.lastWrite.delete(scope);
    this.lastWrite.set(scope, this.sequence);
    if (this.lastWrite.size > this.maxScopes) this.forgetOldest();
  }

  /** Whether `scope` may have been written after `mark`. Errs towards yes for forgotten scopes. */
  writtenSince(scope: string, mark: WriteSequence): boolean {
    const last = this.lastWrite.get(scope) ?? this.forgottenUpTo;
    return last > mark;
  }

  private forgetOldest(): void {
    const oldest = this.lastWrite.entries().next();
    if (oldest.done) return;
    const [scope, sequence] = oldest.value;
    this.lastWrite.delete(scope);
    this.forgottenUpTo = Math.max(this.forgottenUpTo, sequence);
  }
}
