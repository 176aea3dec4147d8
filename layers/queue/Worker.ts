/**
 * The job worker: one fiber per server process that claims due jobs of the registered kinds and runs them, at
 * most `QUEUE_CONCURRENCY` at once. It polls every `QUEUE_POLL_INTERVAL_MS` and wakes early when this process
 * enqueues a job or, on PostgreSQL, when any process commits one (LISTEN/NOTIFY). On PGlite a claim waits for an
 * open transaction to finish, so the in-process wake-up already sees the committed job.
 *
 * While a handler runs its lease is renewed every third of `QUEUE_LEASE_MS`; if the process dies the lease runs
 * out and another worker (or this one after a restart) claims the job again. On shutdown running jobs are
 * interrupted and handed back as due.
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Clock, Duration, Effect, Exit, FiberSet, Layer, Queue, Schedule, Stream } from "effect"
import { AppConfig } from "../config.ts"
import { generateId } from "../crypto.ts"
import { DatabaseInfo } from "../database.ts"
import { type JobInfo, JobOutcome, JobQueue } from "./JobQueue.ts"
import { JOBS_CHANNEL, type JobRow, makeJobsRepo } from "./Repo.ts"

const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const message = error instanceof Error
    ? error.message
    : typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)
  return message.slice(0, 1000)
}

export const QueueWorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (!config.queue.workerEnabled) return
    const queue = yield* JobQueue
    const repo = yield* makeJobsRepo
    const info = yield* DatabaseInfo
    const { concurrency, leaseMs, pollIntervalMs } = config.queue
    const fibers = yield* FiberSet.make()
    let running = 0
    // True when the last claim filled every free slot: more jobs are probably due, so a finishing job wakes us.
    let saturated = false

    const runJob = (job: JobRow, token: string) =>
      Effect.gen(function*() {
        const registered = queue.handlers.get(job.kind)
        const now = yield* nowDate
        if (!registered) return yield* repo.release(job.id, token, now)
        if (job.attempts > job.max_attempts) {
          yield* Effect.logError("job dead: too many runs")
          return yield* repo.kill(job.id, token, `gave up after ${job.max_attempts} runs`, now)
        }
        const jobInfo: JobInfo = {
          id: job.id,
          kind: job.kind,
          attempt: job.attempts,
          createdAt: job.created_at,
          runAt: job.run_at
        }
        const heartbeat = Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          yield* repo.extendLease(job.id, token, new Date(at + leaseMs))
        }).pipe(
          Effect.catchAll((error) => Effect.logWarning("lease renewal failed", error.message)),
          Effect.delay(Duration.millis(Math.floor(leaseMs / 3))),
          Effect.forever
        )
        const exit = yield* Effect.scoped(
          Effect.zipRight(Effect.forkScoped(heartbeat), Effect.exit(registered.run(job.payload, jobInfo)))
        )
        const finished = yield* nowDate
        const owned = yield* Exit.match(exit, {
          onSuccess: (outcome) =>
            JobOutcome.$match(outcome ?? JobOutcome.Done(), {
              Done: () => repo.complete(job.id, token),
              RetryAt: ({ at, error }) =>
                job.attempts >= job.max_attempts
                  ? repo.kill(job.id, token, error, finished)
                  : repo.retry(job.id, token, at, error, finished),
              RescheduleAt: ({ at }) => repo.reschedule(job.id, token, at, finished),
              Dead: ({ error }) =>
                Effect.logError("job dead", error).pipe(Effect.zipRight(repo.kill(job.id, token, error, finished)))
            }),
          onFailure: (cause) => {
            const error = describeFailure(cause)
            if (job.attempts >= job.max_attempts) {
              return Effect.logError("job dead after its last run failed", cause).pipe(
                Effect.zipRight(repo.kill(job.id, token, error, finished))
              )
            }
            const at = new Date(finished.getTime() + Duration.toMillis(registered.retryDelay(job.attempts)))
            return Effect.logWarning("job failed, will retry", error).pipe(
              Effect.zipRight(repo.retry(job.id, token, at, error, finished))
            )
          }
        }).pipe(Effect.uninterruptible)
        if (!owned) yield* Effect.logWarning("job lease was lost before the run finished; the outcome was dropped")
      }).pipe(
        Effect.onInterrupt(() =>
          nowDate.pipe(Effect.flatMap((now) => repo.release(job.id, token, now)), Effect.ignore)
        ),
        Effect.catchAll((error) => Effect.logError("job bookkeeping failed", error.message)),
        Effect.annotateLogs({ job_id: job.id, job_kind: job.kind, job_attempt: job.attempts })
      )

    /** Claims as many due jobs as there are free slots; answers true when more are probably due. */
    const claimAndRun = Effect.gen(function*() {
      const free = concurrency - running
      const kinds = [...queue.handlers.keys()]
      if (free <= 0 || kinds.length === 0) return false
      const now = yield* Clock.currentTimeMillis
      const token = generateId("lease")
      const jobs = yield* repo.claim({
        kinds,
        limit: free,
        now: new Date(now),
        leaseUntil: new Date(now + leaseMs),
        token
      })
      for (const job of jobs) {
        running += 1
        yield* FiberSet.run(
          fibers,
          runJob(job, token).pipe(
            Effect.ensuring(Effect.suspend(() => {
              running -= 1
              // Refill in batches (half the slots) rather than one claim per finished job.
              return saturated && running <= concurrency / 2 ? queue.wake : Effect.void
            }))
          )
        )
      }
      saturated = jobs.length === free
      return saturated
    })

    const idle = Effect.raceFirst(Queue.take(queue.wakeSignal), Effect.sleep(Duration.millis(pollIntervalMs)))

    const loop = claimAndRun.pipe(
      Effect.catchAll((error) => Effect.logWarning("job claim failed", error.message, String(error.cause)).pipe(Effect.as(false))),
      Effect.flatMap((more) => more ? Effect.void : idle),
      Effect.forever
    )

    if (info.backend === "postgres") {
      const pg = yield* PgClient.PgClient
      yield* pg.listen(JOBS_CHANNEL).pipe(
        Stream.runForEach(() => queue.wake),
        Effect.tapError((error) => Effect.logWarning("job notification listener failed", error.message)),
        Effect.retry(Schedule.spaced("1 second")),
        Effect.forkScoped
      )
    }
    yield* Effect.forkScoped(loop)
    yield* Effect.logInfo("job worker started").pipe(
      Effect.annotateLogs({ concurrency, lease_ms: leaseMs, poll_interval_ms: pollIntervalMs })
    )
  })
)
