/** Defaults of the result cache (docs/decisions.md 8); the server's configuration may override them. */

/** How long a cached result is served when the request names no TTL (`QUERY_CACHE_TTL_MS`). */
export const DEFAULT_CACHE_TTL_MS = 60_000;

/** Most entries kept at once; the least recently used goes first. */
export const DEFAULT_CACHE_MAX_ENTRIES = 1000;

/** Most bytes (JSON length of the results) kept at once (`QUERY_CACHE_MAX_BYTES`). */
export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;
