/** One process's concurrency slots: the ids of the slots each key holds. */
import type { ConcurrencySlot } from '../ports/limit-store';
import { CONCURRENCY_RETRY_AFTER_MS } from './rules';

export class MemorySlots {
  /** Only keys holding a slot are present, so memory follows the requests running. */
  private readonly held = new Map<string, Set<symbol>>();

  enter(
    key: string,
    cap: number,
  ): { ok: true; slot: ConcurrencySlot } | { ok: false; retryAfterMs: number } {
    const slots = this.held.get(key) ?? new Set<symbol>();
    if (slots.size >= cap) return { ok: false, retryAfterMs: CONCURRENCY_RETRY_AFTER_MS };
    const id = Symbol(key);
    slots.add(id);
    this.held.set(key, slots);
    return { ok: true, slot: { release: () => this.release(key, id) } };
  }

  get size(): number {
    return this.held.size;
  }

  clear(): void {
    this.held.clear();
  }

  /**
   * Frees the slot `id` if the key still holds it: a second release, or one after the key's slots
   * were cleared, finds nothing and frees nothing, so no count can go below what is held.
   */
  private release(key: string, id: symbol): void {
    const slots = this.held.get(key);
    if (slots === undefined || !slots.delete(id)) return;
    if (slots.size === 0) this.held.delete(key);
  }
}
