/** Shared by the Redis cache's tests: caches on a throwaway Redis, raw commands, time measurements. */
import { connect } from 'node:net';
import type { CacheEntryRecord, CounterTotals, EntryPlace } from '@sqlgate/core';
import { createRedisCache, type RedisCache, type RedisCacheOptions } from '../src';

let prefixes = 0;

/** A prefix no other cache of this test file uses. */
export function freshPrefix(name = 'test'): string {
  prefixes += 1;
  return `${name}-${prefixes}:`;
}

/** Caches made through this, closed by `closeAll()` (in afterEach). */
export class Caches {
  private readonly open: RedisCache[] = [];

  make(url: string, options: Partial<RedisCacheOptions> = {}): RedisCache {
    const cache = createRedisCache({ url, prefix: freshPrefix(), ...options });
    this.open.push(cache);
    return cache;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((cache) => cache.close()));
  }
}

export const placeA: EntryPlace = { scope: 'db-a@server-1', server: 'server-1' };
export const placeB: EntryPlace = { scope: 'db-b@server-1', server: 'server-1' };

/** A small record of `place`. */
export function entry(key: string, place: EntryPlace = placeA): CacheEntryRecord {
  return {
    key,
    ...place,
    query: `SELECT '${key}'`,
    reads: ['t'],
    result: { rows: [{ key }], fields: [], rowCount: 1, command: 'SELECT', truncated: false },
    sizeBytes: 20,
    executionTime: 1,
    cachedAt: new Date(),
    freshMs: 60_000,
    hits: 0,
  };
}

export function counts(hits: number, misses: number, executionMs = 0): CounterTotals {
  return { hits, misses, executed: misses, executionMs };
}

/** Sends one command in RESP and resolves with its decoded reply (a test's own view of Redis). */
export function command(port: number, ...args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = Buffer.alloc(0);
    socket.setTimeout(5000, () => {
      socket.destroy();
      reject(new Error(`no reply to ${args[0]}`));
    });
    socket.once('error', reject);
    socket.once('connect', () => {
      const encoded = args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('');
      socket.write(`*${args.length}\r\n${encoded}`);
    });
    socket.on('data', (chunk: Buffer) => {
      reply = Buffer.concat([reply, chunk]);
      const parsed = parseReply(reply, 0);
      if (parsed === undefined) return;
      socket.destroy();
      if (parsed.value instanceof Error) reject(parsed.value);
      else resolve(parsed.value);
    });
  });
}

/** One RESP2 reply from `at`, or undefined when it has not fully arrived. */
function parseReply(buffer: Buffer, at: number): { value: unknown; end: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const line = buffer.toString('utf8', at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (String.fromCharCode(buffer[at] as number)) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new Error(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return undefined;
      return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: unknown[] = [];
      let position = next;
      for (let index = 0; index < count; index++) {
        const item = parseReply(buffer, position);
        if (item === undefined) return undefined;
        items.push(item.value);
        position = item.end;
      }
      return { value: items, end: position };
    }
    default:
      throw new Error(`unexpected reply: ${line}`);
  }
}

/** Every key under `prefix`, sorted (SCAN until done). */
export async function keysUnder(port: number, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = (await command(
      port,
      'SCAN',
      cursor,
      'MATCH',
      `${prefix}*`,
      'COUNT',
      '1000',
    )) as [string, string[]];
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

/** How a promise settled and after how many milliseconds. */
export async function settle(
  pending: Promise<unknown>,
): Promise<{ ok: boolean; error?: unknown; ms: number }> {
  const started = performance.now();
  try {
    await pending;
    return { ok: true, ms: performance.now() - started };
  } catch (error) {
    return { ok: false, error, ms: performance.now() - started };
  }
}

/** Retries `check` until it passes or `timeoutMs` runs out (then its last failure is thrown). */
export async function eventually(
  check: () => Promise<void> | void,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await pause(25);
    }
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
