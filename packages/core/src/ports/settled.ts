/**
 * How the ports answer (docs/decisions.md 10.21): a call settles with its value or with the reason
 * it failed, as a value. A promise of a port rejects only for a defect, never for anything a server
 * or a caller can cause, so every failure reaches the response through the same values and no
 * layer catches what another threw.
 */
import { ConnectionError, DatabaseError, RequestError } from '../errors';
import { promiseFrom } from '../promise-from';

/**
 * Why a port call failed: PostgreSQL refused (DatabaseError), the connection could not be made or
 * broke (ConnectionError), or a value of the request could not be sent as it was (RequestError).
 */
export type PortFailure = DatabaseError | ConnectionError | RequestError;

export type Settled<T> = { ok: true; value: T } | { ok: false; error: PortFailure };

export function isPortFailure(error: unknown): error is PortFailure {
  return (
    error instanceof DatabaseError ||
    error instanceof ConnectionError ||
    error instanceof RequestError
  );
}

/** For implementations of a port: `work`'s value or its port failure; anything else is a defect and rejects. */
export function settle<T>(work: () => Promise<T>): Promise<Settled<T>> {
  // Chained, not an async function: every request borrows a connection through here, and an
  // async function would cost it one more turn of the microtasks.
  return promiseFrom(work).then(succeeded, failedOrDefect);
}

function succeeded<T>(value: T): Settled<T> {
  return { ok: true, value };
}

function failedOrDefect(error: unknown): Settled<never> {
  if (isPortFailure(error)) return { ok: false, error };
  throw error;
}

/** For callers that prefer exceptions (scripts, tests): the value, or the failure thrown. */
export async function orThrow<T>(pending: Promise<Settled<T>> | Settled<T>): Promise<T> {
  const settled = await pending;
  if (!settled.ok) throw settled.error;
  return settled.value;
}
