/**
 * The Lua scripts of the Redis limit store (docs/limits.md). Redis runs a script alone, so a
 * bucket's read, refill and take, and a cap's count and admission, are each one atomic step that
 * every instance sees in the same order. Time is Redis's own (TIME), never an instance's: the
 * instances' clocks may disagree, Redis's is one. TIME before a write needs effects replication:
 * the default since Redis 7, switched on by `redis.replicate_commands()` on Redis 6.2.
 */

const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
-- Extends the key's TTL to ms when it would end sooner (PTTL is -1 for a key just created).
local function keep_for(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
-- 0.7 * 1000 / 10 is 70.00000000000001 in floats: without this, 70 ms would round up to 71.
local EPSILON = 1e-9
`;

/**
 * KEYS[1] the bucket (hash: `t` tokens left at `u`, Redis time in ms); ARGV tokens, perMs, burst.
 * Returns {1, 0} when a token was taken, {0, ms until one is back} when none was left. A refusal
 * writes nothing. The key expires when the bucket would be full again: a full bucket is no bucket.
 */
const TAKE = `${PRELUDE}
local tokens, per_ms, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
local state = redis.call('HMGET', KEYS[1], 't', 'u')
local level = burst
if state[1] and state[2] then
  -- Redis's clock going back (a failover to a replica behind) refills nothing.
  local elapsed = math.max(0, now - tonumber(state[2]))
  level = math.min(burst, tonumber(state[1]) + elapsed * tokens / per_ms)
end
if level < 1 - EPSILON then
  return {0, math.max(1, math.ceil((1 - level) * per_ms / tokens - EPSILON))}
end
level = math.max(0, level - 1)
-- %.17g: Lua's tostring keeps 14 digits, which would round the time to 10 ms.
redis.call('HSET', KEYS[1], 't', string.format('%.17g', level), 'u', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - level) * per_ms / tokens - EPSILON)))
return {1, 0}
`;

/**
 * KEYS[1] the key's leases (sorted set: slot id -> lease expiry, Redis time in ms); ARGV cap,
 * slot id, lease ms. Forgets expired leases, then adds this one if fewer than cap are left:
 * 1 when added, 0 when refused. The set expires with its last lease.
 */
const ENTER = `${PRELUDE}
local cap, id, lease = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local now = math.floor(now_ms())
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= cap then return 0 end
redis.call('ZADD', KEYS[1], now + lease, id)
keep_for(KEYS[1], lease)
return 1
`;

/**
 * KEYS[1] the key's leases; ARGV slot id, lease ms. Extends the lease if it is still held: 1, or
 * 0 when it had expired (or was released), since taking it back could pass the cap.
 */
const RENEW = `${PRELUDE}
local id, lease = ARGV[1], tonumber(ARGV[2])
local now = math.floor(now_ms())
local expiry = redis.call('ZSCORE', KEYS[1], id)
if not expiry or tonumber(expiry) <= now then return 0 end
redis.call('ZADD', KEYS[1], now + lease, id)
keep_for(KEYS[1], lease)
return 1
`;

export const LIMIT_SCRIPTS = { take: TAKE, enter: ENTER, renew: RENEW } as const;
export type LimitScriptName = keyof typeof LIMIT_SCRIPTS;
