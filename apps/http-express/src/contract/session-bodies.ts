/**
 * The bodies of the session and cancel endpoints (docs/decisions.md 10.26).
 */
import { Type } from '@sinclair/typebox';
import { WarningsSchema } from './responses';

export const SessionOpenedSchema = Type.Object(
  {
    sessionId: Type.String({
      pattern: '^[A-Za-z0-9_-]{22}$',
      description:
        '128 random bits, base64url: the only credential the session requests present. Keep it secret.',
    }),
    expiresAt: Type.String({
      format: 'date-time',
      description: 'When the session ends unless a request comes first.',
    }),
    idleTimeoutMs: Type.Integer({
      minimum: 1,
      description: 'The idle time after which the session ends; each request starts it again.',
    }),
    warnings: Type.Optional(WarningsSchema),
  },
  { $id: 'SessionOpened', description: 'The session is open on one pooled connection.' },
);

export const SessionClosedSchema = Type.Object(
  {
    closed: Type.Literal(true),
    rolledBack: Type.Boolean({
      description: 'A transaction was open (or failed) and was rolled back.',
    }),
  },
  {
    $id: 'SessionClosed',
    description:
      'The session ended: what ran was cancelled, the connection cleaned and given back.',
  },
);

export const CancelledSchema = Type.Object(
  { cancelled: Type.Literal(true), warnings: Type.Optional(WarningsSchema) },
  {
    $id: 'Cancelled',
    description:
      'A CancelRequest was sent for the statements running; the cancelled request answers REQUEST_CANCELLED (409) ' +
      'unless it finished first.',
  },
);
