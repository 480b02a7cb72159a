/**
 * Single-flight for cache misses (docs/decisions.md 10.27): while one request reads a statement
 * for the cache, identical requests that missed at the same point in the writes wait for its
 * result instead of sending the statement again.
 */
import type { WriteMark } from '../ports/cache-store';

interface Flight<T> {
  /** The store's mark when the read began: a later write changes the mark, so nobody joins. */
  mark: WriteMark;
  result: Promise<T | undefined>;
}

/** The read a request leads: `land` it with its result (or undefined when it failed), always. */
export interface LeadFlight<T> {
  land(result: T | undefined): void;
}

/** The flight of a read nobody can join. */
const UNREGISTERED: LeadFlight<never> = { land: () => undefined };

export class ReadFlights<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /**
   * The result of the read running for `key`, when one began at `mark`; undefined when none did
   * (then the caller reads and should `lead`).
   */
  join(key: string, mark: WriteMark): Promise<T | undefined> | undefined {
    const flight = this.flights.get(key);
    return flight !== undefined && flight.mark === mark ? flight.result : undefined;
  }

  /**
   * Registers the caller's read of `key` at `mark`, for others to join until it lands; a read at
   * the same mark stays the one to join, one at another mark is replaced.
   */
  lead(key: string, mark: WriteMark): LeadFlight<T> {
    if (this.flights.get(key)?.mark === mark) return UNREGISTERED;
    let land!: (result: T | undefined) => void;
    const flight: Flight<T> = { mark, result: new Promise((resolve) => (land = resolve)) };
    this.flights.set(key, flight);
    let landed = false;
    return {
      land: (result) => {
        if (landed) return;
        landed = true;
        if (this.flights.get(key) === flight) this.flights.delete(key);
        land(result);
      },
    };
  }
}
