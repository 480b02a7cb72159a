/**
 * Whether a statement that failed with a broken connection provably never ran in PostgreSQL, so
 * that it may be sent again on another connection without any risk of running twice
 * (docs/decisions.md 6).
 *
 * A pooled connection can die while idle before the pool notices (the server restarted, an
 * administrator ended the backend, the server's host rebooted): the first statement sent on it fails.
 * A round trip goes out in one write that starts with a Parse, a Bind (a statement prepared on the
 * connection, docs/decisions.md 10.30) or a Close, and the server answers it with ParseComplete,
 * BindComplete or CloseComplete before anything of the round trip runs. The server buffers its
 * answers, but it flushes them before an error report (and before closing), so:
 * - a FATAL 57P01-57P03 (the backend was ended, the server crashed or is not accepting
 *   connections) with none of these before it means the backend died before it finished reading
 *   the round trip's first message (it may have been parsing it, and already shown it as active
 *   in pg_stat_activity, but ran none of it). Not a FATAL 08xxx: a pooler between sqlgate and the
 *   server (PgBouncer on query_timeout, or when its server connection broke) sends one of its own
 *   while the backend may still be running the statement, whose buffered answers then never come;
 * - a reset (ECONNRESET, EPIPE) with nothing received means the peer closed with our packet unread,
 *   or no longer knew the connection at all.
 * A connection that simply ends with nothing received is not proof: the backend may have run and
 * committed the statement before dying, so such a statement is never sent again. Neither is a
 * protocol fault or a silent server: something arrived, or may still be running. The rule trusts
 * that a FATAL 57P0x comes from PostgreSQL itself: a proxy that makes one up can make any answer up.
 */
import type { ConnectionFacts } from './message-framing';

const SERVER_GONE_SQLSTATES = ['57P01', '57P02', '57P03'];
const UNREAD_SYSTEM_CODES = ['ECONNRESET', 'EPIPE'];

export class StatementDelivery {
  private readonly receiptsBefore: number;

  /** Notes the connection's count of answered Parse, Bind and Close from before the statement is submitted. */
  constructor(private readonly facts: ConnectionFacts) {
    this.receiptsBefore = facts.receipts;
  }

  /** True when `error` (as pg raised it) proves that nothing of the round trip ran. */
  provesNothingRan(error: unknown): boolean {
    if (this.facts.receipts !== this.receiptsBefore) return false;
    if (typeof error !== 'object' || error === null) return false;
    const { code, severity } = error as { code?: unknown; severity?: unknown };
    if (typeof code !== 'string') return false;
    if (typeof severity === 'string') {
      const fatal = severity === 'FATAL' || severity === 'PANIC';
      return fatal && SERVER_GONE_SQLSTATES.includes(code);
    }
    return UNREAD_SYSTEM_CODES.includes(code);
  }
}
