/**
 * One check for every response body the HTTP tests see (docs/decisions.md 10.8): no internal
 * JavaScript message, stack frame or source path ever reaches a caller. `createTestApp` puts the
 * inspector in front of the app; the project's setup file fails any test that produced a violation.
 */
import type { RequestHandler } from 'express';

const INTERNAL_MESSAGE_PATTERNS: readonly RegExp[] = [
  /\b(?:TypeError|RangeError|ReferenceError|InternalError)\b/,
  /is not a function/,
  /Cannot read propert/,
  /Maximum call stack/,
  /\n\s+at \S.*:\d+:\d+/,
  /Error \[ERR_[A-Z_]+\]/,
  /node:internal|node_modules|\/src\/\S+\.ts/,
];

const violations: string[] = [];

/** The internal message a body carries, if any. */
export function internalMessageIn(body: string): string | undefined {
  const pattern = INTERNAL_MESSAGE_PATTERNS.find((each) => each.test(body));
  return pattern ? body.slice(0, 500) : undefined;
}

/** Express middleware: records bodies that carry an internal message. */
export const inspectResponseBodies: RequestHandler = (req, res, next) => {
  // The OpenAPI document describes errors; it is not one.
  if (req.path.endsWith('/openapi.json')) {
    next();
    return;
  }
  const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
  res.end = ((...args: unknown[]) => {
    const chunk = args[0];
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) {
      const found = internalMessageIn(chunk.toString());
      if (found) violations.push(`${req.method} ${req.url} → ${found}`);
    }
    return end(...args);
  }) as typeof res.end;
  next();
};

/** Violations seen since the last call. */
export function takeViolations(): string[] {
  return violations.splice(0);
}
