/**
 * A `Clock` for the server under test: wall time plus an offset the test moves forward. `sleep` stays real, so
 * polling and timeouts keep working, while everything the server schedules by `Clock.currentTimeMillis` (retry
 * times, leases, deadlines) can be made due at once with `advance`.
 */
import { Clock, Duration, Effect } from "effect"

export interface ShiftedClock {
  readonly clock: Clock.Clock
  /** Moves the server's time forward. */
  readonly advance: (by: Duration.DurationInput) => void
  /** Moves the server's time to `at` (never backwards). */
  readonly advanceTo: (at: Date | number) => void
  readonly now: () => number
}

export const shiftedClock = (): ShiftedClock => {
  let offset = 0
  const real = Clock.make()
  const now = () => Date.now() + offset
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: now,
    currentTimeMillis: Effect.sync(now),
    unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: (duration) => real.sleep(duration)
  }
  return {
    clock,
    now,
    advance: (by) => {
      offset += Duration.toMillis(by)
    },
    advanceTo: (at) => {
      const target = typeof at === "number" ? at : at.getTime()
      offset += Math.max(0, target - now())
    }
  }
}
