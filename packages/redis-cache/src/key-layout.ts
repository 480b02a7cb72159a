/**
 * The names of every Redis key this package uses, under the configured prefix P. The Lua scripts
 * (lua-scripts.ts) build the names from P; this module describes them, and gives `clear()` its
 * SCAN pattern.
 *
 * | key                 | type   | holds                                                         | TTL  |
 * | ------------------- | ------ | ------------------------------------------------------------- | ---- |
 * | `P epoch`           | string | a random id, made once; a Redis that lost its data gets a new one | none |
 * | `P g:d:<db hash>`   | string | the database's generation: +1 on each invalidation of it      | none |
 * | `P g:s:<srv hash>`  | string | the server's generation: +1 on each invalidation of it        | none |
 * | `P e:<cache key>`   | hash   | one entry: `r` record, `h` hits, `d`/`s` its hashes, `m` mark | the entry's |
 * | `P i:all`           | zset   | cache key → expiry (ms): what `size()` counts                 | none |
 * | `P i:recent`        | zset   | cache key → cachedAt (ms): the order `recent()` lists         | none |
 * | `P i:size`          | hash   | cache key → sizeBytes                                         | none |
 * | `P i:bytes`         | string | the sum of `i:size`                                           | none |
 * | `P i:d:<db hash>`   | zset   | cache key → expiry: the database's entries                    | none |
 * | `P i:s:<srv hash>`  | zset   | db hash → latest expiry: the server's databases               | none |
 * | `P i:dbs`           | zset   | db hash → latest expiry: every indexed database               | none |
 * | `P i:servers`       | zset   | srv hash → latest expiry: every indexed server                | none |
 * | `P stats`           | hash   | the shared counters (`hits`, `misses`, `executed`, `executionMs`) | none |
 * | `P stats:applied:<instance>` | string | the last counter batch applied for one process   | 24 h |
 * | `P l:r:<key hash>`  | hash   | a limit's token bucket: `t` tokens left at `u` (Redis time, ms) | until full again |
 * | `P l:c:<key hash>`  | zset   | a limit's slots held: slot id → lease expiry (Redis time, ms) | its last lease's |
 *
 * A database or server is named by the SHA-256 of its `scope` or `server` string: fixed length,
 * and free of the glob characters SCAN would read in a pattern. Indexes have no TTL because Redis
 * must never evict them on its own (an entry it could not find would escape invalidation); they
 * empty themselves as entries expire, and an empty sorted set no longer exists.
 */
import { createHash } from 'node:crypto';

/** The hash naming a database (`scope`) or a server in key names. */
export function placeHash(place: string): string {
  return createHash('sha256').update(place).digest('hex');
}

/**
 * A SCAN pattern matching every entry (`e:`) and index (`i:`) key under `prefix` and nothing
 * else: not the generations, the epoch or the counters, which `clear()` must keep.
 */
export function entriesAndIndexesPattern(prefix: string): string {
  return `${escapeGlob(prefix)}[ei]:*`;
}

/** `text` with the characters a Redis glob pattern gives a meaning to escaped. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (character) => `\\${character}`);
}

/**
 * The limit store's keys (redis-limit-store.ts), named by the SHA-256 of the limited key: an API
 * key's id is not readable in Redis, and the name's length is fixed.
 */
export function rateBucketKey(prefix: string, key: string): string {
  return `${prefix}l:r:${placeHash(key)}`;
}

export function concurrencyKey(prefix: string, key: string): string {
  return `${prefix}l:c:${placeHash(key)}`;
}
