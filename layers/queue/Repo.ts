/** SQL of the job queue. Every time comes from the caller (the app's `Clock`), never from `now()`. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Channel of the PostgreSQL notification sent (on commit) when jobs are enqueued. */
export const JOBS_CHANNEL = "gateway_jobs"

export interface JobRow {
  readonly id: string
  readonly kind: string
  readonly payload: unknown
  readonly attempts: number
  readonly max_attempts: number
  readonly run_at: Date
  readonly created_at: Date
}

export interface NewJob {
  readonly id: string
  readonly kind: string
  /** The encoded payload as JSON text. */
  readonly payload: string
  readonly max_attempts: number
  readonly run_at: Date
  readonly unique_key: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const makeJobsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Inserts jobs; the notification is delivered to listeners only when the surrounding transaction commits. */
  const insert = (jobs: ReadonlyArray<NewJob>, options: { readonly unique: boolean }) =>
    jobs.length === 0
      ? Effect.succeed([] as ReadonlyArray<string>)
      : (options.unique
        ? sql<{ readonly id: string }>`
            INSERT INTO jobs ${sql.insert(jobs.map((job) => ({ ...job })))}
            ON CONFLICT (kind, unique_key) WHERE unique_key IS NOT NULL AND status <> 'dead' DO NOTHING
            RETURNING id, pg_notify(${JOBS_CHANNEL}, kind)::text AS notified`
        : sql<{ readonly id: string }>`
            INSERT INTO jobs ${sql.insert(jobs.map((job) => ({ ...job })))}
            RETURNING id, pg_notify(${JOBS_CHANNEL}, kind)::text AS notified`).pipe(
          Effect.map((rows) => rows.map((row) => row.id))
        )

  /**
   * Takes up to `limit` due jobs of the given kinds: pending ones whose `run_at` has come, and running ones
   * whose lease expired (their worker died). Rows locked by another claimer are skipped, not waited for.
   */
  const claim = (options: {
    readonly kinds: ReadonlyArray<string>
    readonly limit: number
    readonly now: Date
    readonly leaseUntil: Date
    readonly token: string
  }) =>
    sql<JobRow>`
      WITH due AS (
        SELECT id FROM jobs
        WHERE kind IN ${sql.in(options.kinds)}
          AND ((status = 'pending' AND run_at <= ${options.now})
            OR (status = 'running' AND locked_until <= ${options.now}))
        ORDER BY run_at
        LIMIT ${options.limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE jobs SET
        status = 'running',
        attempts = jobs.attempts + 1,
        locked_until = ${options.leaseUntil},
        lease_token = ${options.token},
        updated_at = ${options.now}
      FROM due WHERE jobs.id = due.id
      RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempts, jobs.max_attempts, jobs.run_at, jobs.created_at`

  /** Each write below is fenced by the lease token: a worker that lost its lease changes nothing. */
  const owned = (id: string, token: string) => sql`id = ${id} AND lease_token = ${token} AND status = 'running'`

  const changed = <A>(rows: ReadonlyArray<A>) => rows.length > 0

  return {
    insert,
    claim,
    complete: (id: string, token: string) =>
      sql<{ readonly id: string }>`DELETE FROM jobs WHERE ${owned(id, token)} RETURNING id`.pipe(Effect.map(changed)),
    retry: (id: string, token: string, at: Date, error: string, now: Date) =>
      sql<{ readonly id: string }>`
        UPDATE jobs SET status = 'pending', run_at = ${at}, locked_until = NULL, lease_token = NULL,
          last_error = ${error}, updated_at = ${now}
        WHERE ${owned(id, token)} RETURNING id`.pipe(Effect.map(changed)),
    reschedule: (id: string, token: string, at: Date, now: Date) =>
      sql<{ readonly id: string }>`
        UPDATE jobs SET status = 'pending', run_at = ${at}, attempts = 0, locked_until = NULL, lease_token = NULL,
          last_error = NULL, updated_at = ${now}
        WHERE ${owned(id, token)} RETURNING id`.pipe(Effect.map(changed)),
    kill: (id: string, token: string, error: string, now: Date) =>
      sql<{ readonly id: string }>`
        UPDATE jobs SET status = 'dead', locked_until = NULL, lease_token = NULL, last_error = ${error},
          updated_at = ${now}
        WHERE ${owned(id, token)} RETURNING id`.pipe(Effect.map(changed)),
    /** Gives a job back untouched (shutdown): due at once, and the interrupted run does not count. */
    release: (id: string, token: string, now: Date) =>
      sql`
        UPDATE jobs SET status = 'pending', run_at = ${now}, attempts = GREATEST(attempts - 1, 0),
          locked_until = NULL, lease_token = NULL, updated_at = ${now}
        WHERE ${owned(id, token)}`.pipe(Effect.asVoid),
    extendLease: (id: string, token: string, until: Date) =>
      sql`UPDATE jobs SET locked_until = ${until} WHERE ${owned(id, token)}`.pipe(Effect.asVoid)
  }
})
