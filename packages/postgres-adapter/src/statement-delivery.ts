/**
 * Whether a statement that failed with a broken connection provably never ran, so it may be sent
 * on another connection (docs/decisions.md 6). The server acknowledges a round trip's first Parse,
 * Bind or Close before running it and flushes before an error: a FATAL 57P01-57P03, or a reset with
 * nothing received, before any acknowledgement is proof; a FATAL 08xxx (a pooler's own) or a plain
 * close is not.
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
