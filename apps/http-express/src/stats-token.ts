/**
 * STATS_TOKEN and METRICS_TOKEN: when set, the statistics endpoints (or GET /metrics) require
 * `Authorization: Bearer <token>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { writeJson } from './query-endpoint';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

export function requireStatsToken(token: string, realm = 'sqlgate statistics'): RequestHandler {
  // Compared as digests of equal length, in constant time: the token's length leaks nothing either.
  const expected = digest(token);
  return (req, res, next) => {
    const header = req.headers.authorization ?? '';
    // The scheme is case-insensitive (RFC 9110 11.1).
    const given = /^bearer /i.test(header) ? header.slice('Bearer '.length) : '';
    if (given !== '' && timingSafeEqual(digest(given), expected)) {
      next();
      return;
    }
    res.setHeader('WWW-Authenticate', `Bearer realm="${realm}"`);
    writeJson(
      res,
      401,
      JSON.stringify({ error: 'Unauthorized: a valid Bearer token is required' }),
    );
  };
}
