/**
 * The durable job queue (layers/queue): kinds registered on the running server's `JobQueue`, jobs stored in its
 * database, time moved with the server's clock.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EnqueueOptions, type JobHandler, JobKind, JobOutcome, JobQueue } from "../../layers/queue/JobQueue.ts"
import { makeJobsRepo } from "../../layers/queue/Repo.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { shiftedClock } from "../webhooks/clock.ts"
import { eventually, settle } from "../webhooks/helpers.ts"

const time = shiftedClock()
let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ clock: time.clock, env: { QUEUE_POLL_INTERVAL_MS: "50", QUEUE_LEASE_MS: "1500" } })
})
afterAll(() => gw?.close())

const Payload = Schema.Struct({ n: Schema.Number })

const register = <A, I>(kind: JobKind<A, I>, handler: JobHandler<A>) =>
  gw.run(Effect.flatMap(JobQueue, (queue) => queue.register(kind, handler)))

const enqueue = <A, I>(kind: JobKind<A, I>, payload: A, options?: EnqueueOptions) =>
  gw.run(Effect.flatMap(JobQueue, (queue) => queue.enqueue(kind, payload, options)))

interface JobRowView {
  readonly id: string
  readonly status: string
  readonly attempts: number
  readonly run_at: Date
  readonly locked_until: Date | null
  readonly last_error: string | null
}

const jobRow = async (id: string) =>
  (await gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<JobRowView>`SELECT * FROM jobs WHERE id = ${id}`)))[0]

const jobsOfKind = (kind: string) =>
  gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<JobRowView>`SELECT * FROM jobs WHERE kind = ${kind}`))

describe("running jobs", () => {
  it("an enqueued job runs once and leaves the table", async () => {
    const Once = JobKind.make("test.once", Payload)
    const runs: Array<number> = []
    await register(Once, ({ n }) => Effect.sync(() => void runs.push(n)))
    const id = await enqueue(Once, { n: 7 })
    expect(id).toMatch(/^job_/)
    await eventually(async () => runs.length === 1 || undefined)
    await settle()
    expect(runs).toEqual([7])
    expect(await jobRow(id!)).toBeUndefined()
  })

  it("a job enqueued in a transaction that rolls back never runs", async () => {
    const Rolled = JobKind.make("test.rolled", Payload)
    const runs: Array<number> = []
    await register(Rolled, ({ n }) => Effect.sync(() => void runs.push(n)))
    await gw.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* JobQueue
      yield* sql.withTransaction(Effect.zipRight(queue.enqueue(Rolled, { n: 1 }), Effect.fail("rollback"))).pipe(Effect.ignore)
      yield* sql.withTransaction(queue.enqueue(Rolled, { n: 2 }))
    }))
    await eventually(async () => runs.length > 0 || undefined)
    await settle()
    expect(runs).toEqual([2])
    expect(await jobsOfKind("test.rolled")).toEqual([])
  })

  it("a job scheduled for later runs only once its time has come", async () => {
    const Later = JobKind.make("test.later", Payload)
    const runs: Array<number> = []
    await register(Later, ({ n }) => Effect.sync(() => void runs.push(n)))
    await enqueue(Later, { n: 1 }, { runAt: new Date(time.now() + 3600_000) })
    await settle()
    expect(runs).toEqual([])
    time.advance("1 hour")
    await eventually(async () => runs.length === 1 || undefined)
  })

  it("a uniqueKey keeps one live job per kind and key", async () => {
    const Unique = JobKind.make("test.unique", Payload)
    const first = await enqueue(Unique, { n: 1 }, { uniqueKey: "sweep", runAt: new Date(time.now() + 3600_000) })
    const second = await enqueue(Unique, { n: 2 }, { uniqueKey: "sweep" })
    expect(first).toMatch(/^job_/)
    expect(second).toBeNull()
    expect(await jobsOfKind("test.unique")).toHaveLength(1)
  })
})

describe("failures and retries", () => {
  it("a failing handler is retried after the kind's delay, then marked dead with its error after maxAttempts", async () => {
    const Flaky = JobKind.make("test.flaky", Payload, {
      maxAttempts: 3,
      retryDelay: (attempt) => Duration.seconds(10 * attempt)
    })
    const attempts: Array<number> = []
    await register(Flaky, (_payload, job) =>
      Effect.suspend(() => {
        attempts.push(job.attempt)
        return Effect.fail(new Error(`failure ${job.attempt}`))
      }))
    const id = (await enqueue(Flaky, { n: 0 }))!
    for (const [attempt, delay] of [[1, 10_000], [2, 20_000]] as const) {
      const row = await eventually(async () => {
        const current = await jobRow(id)
        return current?.status === "pending" && current.attempts === attempt ? current : undefined
      })
      expect(row.last_error).toBe(`failure ${attempt}`)
      expect(row.run_at.getTime() - time.now()).toBeGreaterThan(delay - 1000)
      expect(row.run_at.getTime() - time.now()).toBeLessThanOrEqual(delay)
      await settle(200)
      expect(attempts).toHaveLength(attempt)
      time.advanceTo(row.run_at)
    }
    const dead = await eventually(async () => {
      const current = await jobRow(id)
      return current?.status === "dead" ? current : undefined
    })
    expect(dead).toMatchObject({ attempts: 3, last_error: "failure 3", locked_until: null })
    time.advance("1 day")
    await settle()
    expect(attempts).toEqual([1, 2, 3])
  })

  it("a handler's RetryAt and RescheduleAt set the next run; Dead stops at once", async () => {
    const Periodic = JobKind.make("test.periodic", Payload)
    const seen: Array<number> = []
    let next = 0
    await register(Periodic, ({ n }) =>
      Effect.sync(() => {
        seen.push(n)
        next = time.now() + 60_000
        return seen.length === 1
          ? JobOutcome.RetryAt({ at: new Date(next), error: "upstream busy" })
          : seen.length === 2
          ? JobOutcome.RescheduleAt({ at: new Date(next) })
          : JobOutcome.Dead({ error: "no longer wanted" })
      }))
    const id = (await enqueue(Periodic, { n: 5 }))!
    const retried = await eventually(async () => {
      const row = await jobRow(id)
      return row?.status === "pending" && row.attempts === 1 ? row : undefined
    })
    expect(retried).toMatchObject({ last_error: "upstream busy" })
    expect(retried.run_at.getTime()).toBe(next)
    time.advanceTo(next)
    const rescheduled = await eventually(async () => {
      const row = await jobRow(id)
      // The handler has run a second time and its outcome is written (attempts reset by RescheduleAt).
      return row?.status === "pending" && seen.length === 2 && row.attempts === 0 ? row : undefined
    })
    expect(rescheduled).toMatchObject({ attempts: 0, last_error: null })
    expect(rescheduled.run_at.getTime()).toBe(next)
    time.advanceTo(next)
    const dead = await eventually(async () => {
      const row = await jobRow(id)
      return row?.status === "dead" ? row : undefined
    })
    expect(dead.last_error).toBe("no longer wanted")
  })

  it("a payload that does not decode makes the job dead without calling the handler", async () => {
    const Strict = JobKind.make("test.strict", Payload)
    const runs: Array<number> = []
    await register(Strict, ({ n }) => Effect.sync(() => void runs.push(n)))
    const now = new Date(time.now())
    await gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO jobs (id, kind, payload, max_attempts, run_at, created_at, updated_at)
          VALUES ('job_bad_payload', 'test.strict', '{"n":"seven"}', 5, ${now}, ${now}, ${now})`))
    const dead = await eventually(async () => {
      const row = await jobRow("job_bad_payload")
      return row?.status === "dead" ? row : undefined
    })
    expect(dead.last_error).toMatch(/^invalid payload/)
    expect(runs).toEqual([])
  })
})

describe("leases", () => {
  it("a job whose worker died is claimed again once its lease expires", async () => {
    const Orphan = JobKind.make("test.orphan", Payload)
    const attempts: Array<number> = []
    await register(Orphan, (_payload, job) => Effect.sync(() => void attempts.push(job.attempt)))
    const now = time.now()
    // As a worker leaves it when it is killed mid-run: running, one attempt used, lease 5 s ahead.
    await gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, locked_until, lease_token, created_at, updated_at)
          VALUES ('job_orphan', 'test.orphan', '{"n":1}', 'running', 1, 5, ${new Date(now)}, ${new Date(now + 5000)},
                  'lease_of_a_dead_worker', ${new Date(now)}, ${new Date(now)})`))
    await settle()
    expect(attempts).toEqual([])
    time.advance("5 seconds")
    await eventually(async () => attempts.length === 1 || undefined)
    expect(attempts).toEqual([2])
    await eventually(async () => (await jobRow("job_orphan")) === undefined || undefined)
  })

  it("a worker that lost its lease cannot complete, retry or kill the job", async () => {
    const outcome = await gw.run(Effect.gen(function*() {
      const repo = yield* makeJobsRepo
      const queue = yield* JobQueue
      yield* queue.enqueue(JobKind.make("test.unclaimed", Payload), { n: 1 })
      const now = time.now()
      const [first] = yield* repo.claim({ kinds: ["test.unclaimed"], limit: 1, now: new Date(now), leaseUntil: new Date(now + 1000), token: "lease_a" })
      const later = new Date(now + 2000)
      const [second] = yield* repo.claim({ kinds: ["test.unclaimed"], limit: 1, now: later, leaseUntil: new Date(now + 60_000), token: "lease_b" })
      return {
        same: first!.id === second!.id,
        attempts: second!.attempts,
        staleRetry: yield* repo.retry(first!.id, "lease_a", later, "stale", later),
        staleKill: yield* repo.kill(first!.id, "lease_a", "stale", later),
        staleComplete: yield* repo.complete(first!.id, "lease_a"),
        complete: yield* repo.complete(first!.id, "lease_b")
      }
    }))
    expect(outcome).toEqual({ same: true, attempts: 2, staleRetry: false, staleKill: false, staleComplete: false, complete: true })
  })

  it("the lease is renewed while a long handler runs, so the job runs once", async () => {
    const Slow = JobKind.make("test.slow", Payload)
    let runs = 0
    let finished = false
    await register(Slow, () =>
      Effect.suspend(() => {
        runs++
        return Effect.sleep("4 seconds").pipe(Effect.ensuring(Effect.sync(() => void (finished = true))))
      }))
    const id = (await enqueue(Slow, { n: 1 }))!
    const running = await eventually(async () => {
      const row = await jobRow(id)
      return row?.status === "running" ? row : undefined
    })
    await settle(2500)
    const renewed = await jobRow(id)
    expect(renewed!.locked_until!.getTime()).toBeGreaterThan(running.locked_until!.getTime())
    await eventually(async () => finished || undefined, 10_000)
    await settle()
    expect(runs).toBe(1)
  })

  it("concurrent claimers never take the same job", async () => {
    const Manual = JobKind.make("test.manual", Payload)
    await gw.run(Effect.flatMap(JobQueue, (queue) => queue.enqueueMany(Manual, Array.from({ length: 30 }, (_, n) => ({ n })))))
    const claimed = await gw.run(Effect.gen(function*() {
      const repo = yield* makeJobsRepo
      const now = time.now()
      return yield* Effect.all(
        Array.from({ length: 6 }, (_, i) =>
          repo.claim({ kinds: ["test.manual"], limit: 10, now: new Date(now), leaseUntil: new Date(now + 60_000), token: `lease_${i}` })),
        { concurrency: "unbounded" }
      )
    }))
    const ids = claimed.flat().map((job) => job.id)
    expect(ids).toHaveLength(30)
    expect(new Set(ids).size).toBe(30)
  })

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "on PostgreSQL a claim skips rows locked by an open claim instead of waiting (SKIP LOCKED)",
    async () => {
      const Locked = JobKind.make("test.locked", Payload)
      await gw.run(Effect.flatMap(JobQueue, (queue) => queue.enqueueMany(Locked, Array.from({ length: 10 }, (_, n) => ({ n })))))
      const claim = (token: string, limit: number) =>
        Effect.gen(function*() {
          const repo = yield* makeJobsRepo
          const now = time.now()
          return yield* repo.claim({ kinds: ["test.locked"], limit, now: new Date(now), leaseUntil: new Date(now + 60_000), token })
        })
      let holding = true
      const holder = gw.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* claim("lease_holder", 4)
          yield* Effect.sleep("1 second")
          holding = false
          return rows
        }))
      }))
      await settle(300)
      const other = await gw.run(claim("lease_other", 10))
      expect(holding).toBe(true)
      const held = await holder
      expect(held).toHaveLength(4)
      expect(other).toHaveLength(6)
      expect(other.some((job) => held.some((h) => h.id === job.id))).toBe(false)
    }
  )
})
