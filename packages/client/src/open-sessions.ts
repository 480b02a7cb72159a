/**
 * begin()'s sessions still open when the program goes away, ended then rather than at the server's
 * idle timeout (an ended session rolls back its transaction, docs/interface.md "Sessions"): on a
 * page's `pagehide` (the request made to outlive the page), and where there is a `process` (Node,
 * Bun, Deno) on its `beforeExit`, which comes when the process runs out of work and is about to
 * exit on its own; not on `process.exit()` or a signal, after which nothing more is sent. The
 * listeners are there only while a session is open. Nothing is imported from Node: `process` is
 * looked up on globalThis.
 */
import { closeSession, type Wire } from './wire';

interface OpenSession {
  wire: Wire;
  sessionId: string;
}

/** What the client uses of a Node-like `process`. */
interface ProcessEvents {
  on(event: 'beforeExit', listener: () => void): unknown;
  off(event: 'beforeExit', listener: () => void): unknown;
}

const open = new Set<OpenSession>();

function processEvents(): ProcessEvents | undefined {
  const candidate = (globalThis as { process?: Partial<ProcessEvents> }).process;
  return typeof candidate?.on === 'function' && typeof candidate.off === 'function'
    ? (candidate as ProcessEvents)
    : undefined;
}

/** Ends every open session; `keepalive` lets the requests outlive a page that is going away. */
function endAll(keepalive: boolean): Promise<unknown> {
  const sessions = [...open];
  open.clear();
  unwatch();
  return Promise.all(
    sessions.map(({ wire, sessionId }) => closeSession(wire, sessionId, keepalive)),
  );
}

const onPageHide = (): void => void endAll(true);
// The requests keep the process alive until they are answered; it then exits as it was going to.
const onBeforeExit = (): void => void endAll(false);

function watch(): void {
  globalThis.addEventListener?.('pagehide', onPageHide);
  processEvents()?.on('beforeExit', onBeforeExit);
}

function unwatch(): void {
  globalThis.removeEventListener?.('pagehide', onPageHide);
  processEvents()?.off('beforeExit', onBeforeExit);
}

/**
 * Keeps `sessionId` to be ended if the program goes away while it is open; call the returned
 * function once the session is ended otherwise.
 */
export function endAtExit(wire: Wire, sessionId: string): () => void {
  const session = { wire, sessionId };
  if (open.size === 0) watch();
  open.add(session);
  return () => {
    if (open.delete(session) && open.size === 0) unwatch();
  };
}
