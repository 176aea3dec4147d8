/**
 * Read-through caches for lookups on the request path (credentials, routing tables, billing settings), so a
 * proxied call makes no database round trip. Entries live `LOOKUP_CACHE_TTL`; a service that changes what a cache
 * holds invalidates it at once, so this process never serves a stale answer, and other processes see the change
 * within the TTL.
 */
import { Cache, Duration, type Effect } from "effect"

export const LOOKUP_CACHE_TTL = Duration.seconds(10)

export const makeLookupCache = <A, E = never>(lookup: (key: string) => Effect.Effect<A, E>, capacity = 10_000) =>
  Cache.make({ capacity, timeToLive: LOOKUP_CACHE_TTL, lookup })
