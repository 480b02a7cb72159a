/**
 * The ways a request's answer is made. Each use case runs the same steps; the mode says which of
 * their variants apply.
 */
import type { StreamRoute } from '../routing/read-routing';
import type { SessionRun } from '../sessions/session-use-cases';
import type { CopyOut } from '../streaming/copy-out';
import type { EventChannel } from '../streaming/event-channel';

/**
 * Asked for a channel once the request turns out to stream: always with `rows`, and for a lone
 * COPY ... TO STDOUT (with its format); `caller` is whom its rows in flight are counted for (10.37).
 */
export type OpenStream = (caller: string, copy?: CopyOut, route?: StreamRoute) => EventChannel;

export type RequestMode =
  /** The answer is whole, in JSON (POST /api/query). */
  | { kind: 'whole' }
  /** The answer may stream (docs/decisions.md 10.22). */
  | { kind: 'streamed'; openStream: OpenStream }
  /** The request's one COPY ... FROM STDIN reads `source` (POST /api/copy). */
  | { kind: 'copy-from'; source: AsyncIterable<Uint8Array> }
  /** The request runs in a session, in order, as written (docs/decisions.md 10.26). */
  | { kind: 'session'; inSession: SessionRun };

export const WHOLE: RequestMode = Object.freeze({ kind: 'whole' });
