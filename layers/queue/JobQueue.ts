/**
 * The durable job queue: jobs live in the database (PGlite or PostgreSQL), so an enqueue inside a transaction
 * commits or rolls back with the change that caused it.
 *
 * A module defines a kind once and registers its handler when its service is built:
 *
 * ```ts
 * export const ExpireSessions = JobKind.make("sessions.expire", Schema.Struct({ project_id: Schema.String }))
 * // in the service constructor
 * const queue = yield* JobQueue
 * yield* queue.register(ExpireSessions, (payload, job) => expireIdle(payload.project_id))
 * // anywhere (inside `sql.withTransaction` to tie it to a change)
 * yield* queue.enqueue(ExpireSessions, { project_id }, { runAt, uniqueKey: project_id })
 * ```
 *
 * The worker (`Worker.ts`) claims due jobs of registered kinds with `FOR UPDATE SKIP LOCKED` under a lease that
 * it renews while the handler runs; a job whose worker died is claimed again once the lease expires. Delivery is
 * at least once: handlers must tolerate a repeat.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Data, Duration, Effect, Queue, Schema } from "effect"
import { generateId } from "../crypto.ts"
import { makeJobsRepo } from "./Repo.ts"

/** A kind of job: its name, payload schema and default retry policy for handler failures. */
export interface JobKind<A, I> {
  readonly name: string
  readonly payload: Schema.Schema<A, I>
  /** Runs (claims) before the job is declared dead; crashed runs count too. */
  readonly maxAttempts: number
  /** Delay before the next run after the handler failed on run number `attempt` (1-based). */
  readonly retryDelay: (attempt: number) => Duration.Duration
}

/** Default retry delay after a failure: 2^attempt seconds, at most one hour. */
export const exponentialDelay = (attempt: number): Duration.Duration =>
  Duration.seconds(Math.min(2 ** attempt, 3600))

export const JobKind = {
  make: <A, I>(
    name: string,
    payload: Schema.Schema<A, I>,
    options: { readonly maxAttempts?: number; readonly retryDelay?: (attempt: number) => Duration.Duration } = {}
  ): JobKind<A, I> => ({
    name,
    payload,
    maxAttempts: options.maxAttempts ?? 10,
    retryDelay: options.retryDelay ?? exponentialDelay
  })
}

/** What a handler decided. Returning nothing means `Done`; failing means "retry by the kind's policy". */
export type JobOutcome = Data.TaggedEnum<{
  /** Finished: the job is removed. */
  Done: {}
  /** This run failed; run again at `at` (counts towards `maxAttempts`). */
  RetryAt: { readonly at: Date; readonly error: string }
  /** This run succeeded; run again at `at` with the attempt count reset (periodic jobs). */
  RescheduleAt: { readonly at: Date }
  /** Give up: the job stays in the table as `dead` with the reason. */
  Dead: { readonly error: string }
}>
export const JobOutcome = Data.taggedEnum<JobOutcome>()

/** What a handler learns about the run. */
export interface JobInfo {
  readonly id: string
  readonly kind: string
  /** This run's number, 1 for the first (a run interrupted by a crash counts). */
  readonly attempt: number
  readonly createdAt: Date
  readonly runAt: Date
}

export type JobHandler<A> = (payload: A, job: JobInfo) => Effect.Effect<JobOutcome | void, unknown>

/** A registered kind with its payload decoding folded in. */
export interface RegisteredJob {
  readonly kind: string
  readonly maxAttempts: number
  readonly retryDelay: (attempt: number) => Duration.Duration
  readonly run: (payload: unknown, job: JobInfo) => Effect.Effect<JobOutcome | void, unknown>
}

export interface EnqueueOptions {
  /** When the job becomes due (default: now). */
  readonly runAt?: Date
  /**
   * At most one live (pending or running) job per kind and key: a second enqueue with the same key is ignored
   * and answers null. For periodic jobs scheduled at every start.
   */
  readonly uniqueKey?: string
}

export class JobQueue extends Effect.Service<JobQueue>()("JobQueue", {
  effect: Effect.gen(function*() {
    const repo = yield* makeJobsRepo
    const handlers = new Map<string, RegisteredJob>()
    // One pending signal is enough: the worker claims everything due when it wakes.
    const wakeSignal = yield* Queue.sliding<void>(1)
    const wake = Queue.offer(wakeSignal, undefined).pipe(Effect.asVoid)

    const enqueueMany = <A, I>(
      kind: JobKind<A, I>,
      payloads: ReadonlyArray<A>,
      options: EnqueueOptions = {}
    ): Effect.Effect<ReadonlyArray<string>, SqlError> =>
      Effect.gen(function*() {
        if (payloads.length === 0) return []
        const now = new Date(yield* Clock.currentTimeMillis)
        const encode = Schema.encode(kind.payload)
        const jobs = yield* Effect.forEach(payloads, (payload) =>
          encode(payload).pipe(
            Effect.orDieWith((error) => new Error(`job ${kind.name}: payload does not encode: ${error.message}`)),
            Effect.map((encoded) => ({
              id: generateId("job"),
              kind: kind.name,
              payload: JSON.stringify(encoded),
              max_attempts: kind.maxAttempts,
              run_at: options.runAt ?? now,
              unique_key: options.uniqueKey ?? null,
              created_at: now,
              updated_at: now
            }))
          ))
        const ids = yield* repo.insert(jobs, { unique: options.uniqueKey !== undefined })
        // In-process wake-up; other processes (PostgreSQL) hear the NOTIFY sent on commit.
        yield* wake
        return ids
      })

    return {
      /**
       * Adds a job. Runs on the ambient connection: inside `sql.withTransaction` it commits or rolls back with
       * the transaction. Answers the job id, or null when `uniqueKey` matched a live job.
       */
      enqueue: <A, I>(kind: JobKind<A, I>, payload: A, options: EnqueueOptions = {}) =>
        enqueueMany(kind, [payload], options).pipe(Effect.map((ids) => ids[0] ?? null)),
      enqueueMany,
      /** Makes this process's worker run `kind` with `handler`. Register once, when the owning service is built. */
      register: <A, I>(kind: JobKind<A, I>, handler: JobHandler<A>): Effect.Effect<void> =>
        Effect.suspend(() => {
          if (handlers.has(kind.name)) return Effect.dieMessage(`job kind ${kind.name} is already registered`)
          const decode = Schema.decodeUnknown(kind.payload)
          handlers.set(kind.name, {
            kind: kind.name,
            maxAttempts: kind.maxAttempts,
            retryDelay: kind.retryDelay,
            // A payload that no longer decodes will not decode on a retry either.
            run: (payload, job) =>
              decode(payload).pipe(
                Effect.matchEffect({
                  onFailure: (error) => Effect.succeed(JobOutcome.Dead({ error: `invalid payload: ${error.message}` })),
                  onSuccess: (decoded) => handler(decoded, job)
                })
              )
          })
          return wake
        }),
      /** Registered kinds, read by the worker on every claim. */
      handlers: handlers as ReadonlyMap<string, RegisteredJob>,
      /** Wakes this process's worker now. */
      wake,
      /** Taken by the worker while idle. */
      wakeSignal: wakeSignal as Queue.Dequeue<void>
    }
  })
}) {}
