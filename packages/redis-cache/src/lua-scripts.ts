/**
 * The Lua scripts that make each store operation one atomic round trip. Redis runs a script alone,
 * so no other client's command falls between a generation check and the write it guards, nor
 * between an invalidation's generation bump and the deletion of what it covers.
 *
 * Every script takes the key prefix as ARGV[1] and builds the key names of key-layout.ts from it,
 * including names it only learns while running (the entries of a database index). Redis allows
 * that outside Cluster mode; Redis Cluster is not supported, since one operation spans many slots.
 * TIME is read inside scripts that write after it, which needs effects replication: the default
 * since Redis 7, switched on by `redis.replicate_commands()` on Redis 6.2.
 */

/** Shared by every script. */
const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local prefix = ARGV[1]
local function k(name) return prefix .. name end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- epoch:databaseGeneration:serverGeneration, the point a mark names. Without an epoch (a Redis
-- that lost its data) it is nil, unless a new epoch is given to create.
local function current_mark(db, server, new_epoch)
  local epoch = redis.call('GET', k('epoch'))
  if not epoch then
    if not new_epoch then return nil end
    redis.call('SET', k('epoch'), new_epoch, 'NX')
    epoch = redis.call('GET', k('epoch'))
  end
  return epoch .. ':' .. (redis.call('GET', k('g:d:' .. db)) or '0') .. ':' ..
    (redis.call('GET', k('g:s:' .. server)) or '0')
end

-- Forgets a cache key in the indexes every entry is in.
local function unindex(key)
  redis.call('ZREM', k('i:all'), key)
  redis.call('ZREM', k('i:recent'), key)
  local size = redis.call('HGET', k('i:size'), key)
  if size then
    redis.call('HDEL', k('i:size'), key)
    if redis.call('DECRBY', k('i:bytes'), size) <= 0 then redis.call('DEL', k('i:bytes')) end
  end
end

-- Removes an entry and its index memberships; 1 when a live entry went, else 0.
local function drop(key)
  local entry = k('e:' .. key)
  local db = redis.call('HGET', entry, 'd')
  if db then redis.call('ZREM', k('i:d:' .. db), key) end
  unindex(key)
  return redis.call('UNLINK', entry)
end

-- Drops up to budget (at least 1) entries of a database; when none is left, its index goes too.
-- Returns the live entries removed, the entries looked at, and whether any are left.
local function drop_database(db, budget)
  local index = k('i:d:' .. db)
  local keys = redis.call('ZRANGE', index, 0, math.max(budget, 1) - 1)
  local removed = 0
  for _, key in ipairs(keys) do
    removed = removed + drop(key)
    redis.call('ZREM', index, key)
  end
  if redis.call('EXISTS', index) == 1 then return removed, #keys, true end
  redis.call('ZREM', k('i:dbs'), db)
  return removed, #keys, false
end

-- Forgets up to limit expired entries, and the indexes of databases and servers whose entries all
-- expired, so that indexes do not grow with entries Redis has already dropped.
local function sweep(now, limit)
  local before = '(' .. now
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', k('i:all'), '-inf', before, 'LIMIT', 0, limit)) do
    unindex(key)
  end
  for _, db in ipairs(redis.call('ZRANGEBYSCORE', k('i:dbs'), '-inf', before, 'LIMIT', 0, limit)) do
    redis.call('UNLINK', k('i:d:' .. db))
    redis.call('ZREM', k('i:dbs'), db)
  end
  for _, server in ipairs(redis.call('ZRANGEBYSCORE', k('i:servers'), '-inf', before, 'LIMIT', 0, limit)) do
    redis.call('UNLINK', k('i:s:' .. server))
    redis.call('ZREM', k('i:servers'), server)
  end
end
`;

/** ARGV: prefix, db hash, server hash, new epoch. Returns the current mark, creating the epoch. */
const MARK = `${PRELUDE}
return current_mark(ARGV[2], ARGV[3], ARGV[4])
`;

/**
 * ARGV: prefix, cache key, now ms ('': any age), stale accepted ms. Returns {record, hits} with the
 * hit counted, or nil when absent, older than the caller accepts (no hit counted), or older than its
 * database's or server's last invalidation (then it is removed: an invalidation normally removes
 * it itself, this covers an entry its indexes lost, e.g. one set while clear() ran).
 */
const GET = `${PRELUDE}
local key = ARGV[2]
local entry = k('e:' .. key)
local f = redis.call('HMGET', entry, 'r', 'd', 's', 'm', 'c', 'f')
if not f[1] then return false end
if current_mark(f[2], f[3], nil) ~= f[4] then
  drop(key)
  return false
end
-- Too stale for this caller: not served, so no hit is counted.
if ARGV[3] ~= '' and tonumber(ARGV[3]) - tonumber(f[5]) > tonumber(f[6]) + tonumber(ARGV[4]) then
  return false
end
return {f[1], redis.call('HINCRBY', entry, 'h', 1)}
`;

/** How many expired entries a set forgets at most: more than it adds, so the backlog drains. */
const SWEEP_ON_SET = 16;
/** Pages of `i:recent` one `recent()` looks through at most. */
const RECENT_PAGES = 10;
/** How many `size()` forgets at most, so one call never blocks Redis for long. */
const SWEEP_ON_SIZE = 1000;

/**
 * ARGV: prefix, cache key, db hash, server hash, mark ('' for none), ttl ms (0: remove instead),
 * record, hits, sizeBytes, cachedAt ms, new epoch, freshMs, summary (what recent lists). Returns 1
 * when kept, 0 when refused or removed.
 */
const SET = `${PRELUDE}
local key, db, server, mark, ttl = ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local current = current_mark(db, server, ARGV[11])
if mark ~= '' and mark ~= current then return 0 end
if ttl <= 0 then
  drop(key)
  return 0
end
local now = now_ms()
local expires = now + ttl
local entry = k('e:' .. key)
local previous_db = redis.call('HGET', entry, 'd')
if previous_db and previous_db ~= db then redis.call('ZREM', k('i:d:' .. previous_db), key) end
unindex(key)
redis.call('DEL', entry)
redis.call('HSET', entry, 'r', ARGV[7], 'h', ARGV[8], 'd', db, 's', server, 'm', current,
  'c', ARGV[10], 'f', ARGV[12], 'q', ARGV[13])
redis.call('PEXPIRE', entry, ttl)
redis.call('ZADD', k('i:all'), expires, key)
redis.call('ZADD', k('i:recent'), ARGV[10], key)
redis.call('HSET', k('i:size'), key, ARGV[9])
redis.call('INCRBY', k('i:bytes'), ARGV[9])
redis.call('ZADD', k('i:d:' .. db), expires, key)
redis.call('ZADD', k('i:s:' .. server), 'GT', expires, db)
redis.call('ZADD', k('i:dbs'), 'GT', expires, db)
redis.call('ZADD', k('i:servers'), 'GT', expires, server)
redis.call('ZREMRANGEBYSCORE', k('i:d:' .. db), '-inf', '(' .. now)
redis.call('ZREMRANGEBYSCORE', k('i:s:' .. server), '-inf', '(' .. now)
sweep(now, ${SWEEP_ON_SET})
return 1
`;

/**
 * ARGV: prefix, db hash, '1' to advance the generation (the first call of an invalidation), the
 * most entries to drop. Returns {live entries removed, 1 when entries are left to drop}. The
 * generation alone keeps the promise (get, set and recent compare marks), so the entries are
 * dropped in batches, and Redis serves other clients between them however large the cache.
 */
const INVALIDATE_DATABASE = `${PRELUDE}
local db = ARGV[2]
if ARGV[3] == '1' then redis.call('INCR', k('g:d:' .. db)) end
local removed, _, left = drop_database(db, tonumber(ARGV[4]))
return {removed, left and 1 or 0}
`;

/** ARGV: prefix, server hash, '1' to advance the generation, budget; as INVALIDATE_DATABASE. */
const INVALIDATE_SERVER = `${PRELUDE}
local server = ARGV[2]
if ARGV[3] == '1' then redis.call('INCR', k('g:s:' .. server)) end
local databases = k('i:s:' .. server)
local budget = tonumber(ARGV[4])
local removed = 0
-- A database's scope names its server, so every entry of these indexes is this server's.
for _, db in ipairs(redis.call('ZRANGE', databases, 0, -1)) do
  if budget <= 0 then break end
    local dropped, looked_at, left = drop_database(db, budget)
  removed = removed + dropped
  budget = budget - looked_at
  if left then break end
  redis.call('ZREM', databases, db)
end
if redis.call('EXISTS', databases) == 1 then return {removed, 1} end
redis.call('ZREM', k('i:servers'), server)
return {removed, 0}
`;

/**
 * ARGV: prefix, limit. Returns {summary, hits, ...} (never the rows, which may be large) of up
 * to limit live entries, most recently cached first; forgets the keys it finds gone.
 */
const RECENT = `${PRELUDE}
local limit = tonumber(ARGV[2])
local found, gone, stale = {}, {}, {}
local start, page = 0, math.max(limit, 16)
-- At most RECENT_PAGES pages: after a quiet spell many keys may be gone, and one call must not
-- walk them all (set and size() sweep them).
local pages = 0
while #found < 2 * limit and pages < ${RECENT_PAGES} do
  pages = pages + 1
  local keys = redis.call('ZREVRANGE', k('i:recent'), start, start + page - 1)
  if #keys == 0 then break end
  for _, key in ipairs(keys) do
        local f = redis.call('HMGET', k('e:' .. key), 'q', 'h', 'd', 's', 'm')
    if not f[1] then
      table.insert(gone, key)
    elseif current_mark(f[3], f[4], nil) ~= f[5] then
      table.insert(stale, key)
    else
      table.insert(found, f[1])
      table.insert(found, f[2])
      if #found >= 2 * limit then break end
    end
  end
  start = start + page
end
-- Removed after the walk: removing while paging by rank would skip entries.
for _, key in ipairs(gone) do unindex(key) end
for _, key in ipairs(stale) do drop(key) end
return found
`;

/** ARGV: prefix. Returns {live entries, bytes}, after forgetting a batch of expired ones. */
const USAGE = `${PRELUDE}
local now = now_ms()
sweep(now, ${SWEEP_ON_SIZE})
return {redis.call('ZCOUNT', k('i:all'), now, '+inf'), tonumber(redis.call('GET', k('i:bytes')) or '0')}
`;

/** How long the last applied counter batch of a process is remembered after its last flush. */
export const APPLIED_BATCH_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * ARGV: prefix, instance id, then per batch: sequence, hits, misses, executed, executionMs.
 * Applies each batch whose sequence is above the instance's last applied one, so a batch resent
 * after a timeout that Redis had in fact applied is not counted twice. Returns the totals as
 * HGETALL gives them.
 */
const ADD_COUNTERS = `${PRELUDE}
local applied = k('stats:applied:' .. ARGV[2])
local stats = k('stats')
local last = tonumber(redis.call('GET', applied) or '0')
local i = 3
while ARGV[i] do
  local sequence = tonumber(ARGV[i])
  if sequence > last then
    for offset, field in ipairs({'hits', 'misses', 'executed'}) do
      if ARGV[i + offset] ~= '0' then redis.call('HINCRBY', stats, field, ARGV[i + offset]) end
    end
    if ARGV[i + 4] ~= '0' then redis.call('HINCRBYFLOAT', stats, 'executionMs', ARGV[i + 4]) end
    last = sequence
  end
  i = i + 5
end
if last > 0 then redis.call('SET', applied, last, 'PX', ${APPLIED_BATCH_TTL_MS}) end
return redis.call('HGETALL', stats)
`;

/** ARGV: prefix. Removes the indexes whose names are fixed, at once. */
const DROP_FIXED_INDEXES = `${PRELUDE}
for _, name in ipairs({'i:all', 'i:recent', 'i:size', 'i:bytes', 'i:dbs', 'i:servers'}) do
  redis.call('UNLINK', k(name))
end
return 1
`;

export const LUA_SCRIPTS = {
  sqlgateMark: MARK,
  sqlgateGet: GET,
  sqlgateSet: SET,
  sqlgateInvalidateDatabase: INVALIDATE_DATABASE,
  sqlgateInvalidateServer: INVALIDATE_SERVER,
  sqlgateRecent: RECENT,
  sqlgateUsage: USAGE,
  sqlgateAddCounters: ADD_COUNTERS,
  sqlgateDropFixedIndexes: DROP_FIXED_INDEXES,
} as const;

export type ScriptName = keyof typeof LUA_SCRIPTS;
