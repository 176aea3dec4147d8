/**
 * The retry policy of §6.2: a 2xx answer is success; a 4xx other than 429 (and a redirect, which is not
 * followed) is final; 5xx, 429, timeouts and network errors are retried 2 s, 4 s, 8 s, ... after each failed
 * attempt (or after the `Retry-After` of a 429 or 503), until 24 hours after the delivery was created.
 */
import { Duration, Option } from "effect"
import { parseRetryAfter, type WireResult } from "./Transport.ts"

export const RETRY_BUDGET = Duration.hours(24)

/** Never wait less than this after an attempt, whatever `Retry-After` says. */
const MIN_DELAY_MS = 1000

export type Verdict =
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "Final"; readonly error: string }
  | { readonly _tag: "Retry"; readonly error: string; readonly retryAfterMs: Option.Option<number> }

export const judge = (result: WireResult, now: number): Verdict => {
  const status = result.statusCode
  if (status === null) return { _tag: "Retry", error: result.error ?? "no answer", retryAfterMs: Option.none() }
  if (status >= 200 && status < 300) return { _tag: "Succeeded" }
  if (status === 429 || status === 503) {
    return { _tag: "Retry", error: `HTTP ${status}`, retryAfterMs: parseRetryAfter(result.retryAfter, now) }
  }
  if (status >= 500) return { _tag: "Retry", error: `HTTP ${status}`, retryAfterMs: Option.none() }
  if (status >= 300 && status < 400) return { _tag: "Final", error: `HTTP ${status}: redirects are not followed` }
  return { _tag: "Final", error: `HTTP ${status}` }
}

/** The backoff after failed attempt number `attempt` (1-based): 2 s, 4 s, 8 s, ... */
export const backoffMs = (attempt: number): number => 2000 * 2 ** Math.max(0, attempt - 1)

/**
 * When to try again after failed attempt `attempt` that finished at `finishedAt`, or None once the budget is
 * spent. The last retry is moved up to the deadline rather than dropped.
 */
export const nextAttemptAt = (options: {
  readonly attempt: number
  readonly finishedAt: number
  readonly deadline: number
  readonly retryAfterMs: Option.Option<number>
}): Option.Option<Date> => {
  if (options.finishedAt >= options.deadline) return Option.none()
  const delay = Option.match(options.retryAfterMs, {
    onNone: () => backoffMs(options.attempt),
    onSome: (ms) => Math.max(MIN_DELAY_MS, ms)
  })
  return Option.some(new Date(Math.min(options.finishedAt + delay, options.deadline)))
}
