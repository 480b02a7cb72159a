/**
 * A session runs one statement at a time (sqlgate answers a second one SESSION_BUSY). Calls made
 * together on one session, as `Promise.all` makes them, are sent one after the other in the order
 * they were made, as node-postgres queues them on one connection.
 */
export type InTurn = <T>(run: () => Promise<T>) => Promise<T>;

export function oneAtATime(): InTurn {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const turn = tail.then(run, run);
    tail = turn.catch(() => undefined);
    return turn;
  };
}
