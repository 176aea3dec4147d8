/**
 * Benchmark: rebuilding the state of a 10,000-event session (`npm run bench:sessions`).
 *
 * Builds one session of 101 turns (each: input, start, 95 text deltas, model step, completion; plus
 * `session.created` = 10,000 events) through the service's event log on the real database (embedded PGlite, or
 * PostgreSQL when `TEST_DATABASE_URL` is set), then times, over several runs:
 * - full replay: read all 10,000 rows and fold them (what a rebuild without checkpoints costs);
 * - checkpoint + tail: read the turn-100 checkpoint and the 99 events after it, and fold those;
 * - fold only: the pure fold of the 10,000 rows already in memory.
 * Writes the medians to BENCHMARKS-sessions.md.
 */
import { Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { isDeepStrictEqual } from "node:util"
import { Sessions } from "../../modules/sessions/Service.ts"
import { rebuild } from "../../modules/sessions/state.ts"
import { startGateway } from "../harness.ts"
import { buildSession } from "../sessions/synthetic.ts"

const RUNS = 15
const TURNS = 101
const DELTAS = 95

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
const ms = (value: number) => `${value.toFixed(1)} ms`

interface Result {
  readonly backend: string
  readonly events: number
  readonly buildMs: number
  readonly replayMs: number
  readonly loadMs: number
  readonly foldMs: number
}

const measure = async (backend: string): Promise<Result> => {
  const gw = await startGateway({ env: { SESSION_SWEEP_INTERVAL_MS: "3600000" } })
  try {
    const buildStarted = performance.now()
    const { id } = await gw.run(buildSession(gw.project.id, TURNS, DELTAS))
    const buildMs = performance.now() - buildStarted
    return await gw.run(Effect.gen(function*() {
      const sessions = yield* Sessions
      const rows = yield* sessions.log.repo.allEventsAfter(id, 0)
      const time = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.gen(function*() {
          const times: Array<number> = []
          for (let i = 0; i < RUNS; i++) {
            const started = performance.now()
            yield* effect
            times.push(performance.now() - started)
          }
          return median(times)
        })
      const replayMs = yield* time(sessions.log.replay(id))
      const loadMs = yield* time(sessions.log.load(id))
      const foldMs = yield* time(Effect.sync(() => rebuild(null, rows)))
      const a = Option.getOrThrow(yield* sessions.log.load(id))
      const b = Option.getOrThrow(yield* sessions.log.replay(id))
      if (!isDeepStrictEqual(a, b)) throw new Error("checkpoint + tail differs from full replay")
      return { backend, events: rows.length, buildMs, replayMs, loadMs, foldMs }
    }))
  } finally {
    await gw.close()
  }
}

const main = async () => {
  const postgresUrl = process.env.TEST_DATABASE_URL
  delete process.env.TEST_DATABASE_URL
  const results = [await measure("PGlite (embedded)")]
  if (postgresUrl) {
    process.env.TEST_DATABASE_URL = postgresUrl
    results.push(await measure("PostgreSQL (local)"))
  }
  const events = results[0]!.events.toLocaleString("en")
  const row = (label: string, pick: (result: Result) => number) =>
    `| ${label} | ${results.map((result) => ms(pick(result))).join(" | ")} |`
  const report = [
    "# Benchmark: rebuilding a session's state",
    "",
    "`npm run bench:sessions` (test/bench/sessions-rebuild.ts; set `TEST_DATABASE_URL` to add PostgreSQL). One",
    `session of ${events} events: 101 turns of input, start, 95 text deltas, model step and completion, plus`,
    "`session.created`. Checkpoints are written every 50 turns, so the latest one (turn 100) leaves a 99-event",
    `tail. Medians of ${RUNS} runs.`,
    "",
    `- Machine: ${Os.cpus().length} × ${Os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${Os.platform()}`,
    `- Date: ${new Date().toISOString().slice(0, 10)}`,
    "",
    `| Rebuild | ${results.map((result) => result.backend).join(" | ")} |`,
    `|---|${results.map(() => "---").join("|")}|`,
    row(`Full replay: read ${events} events and fold them`, (r) => r.replayMs),
    row("Latest checkpoint + tail (what each turn, approve, reject and sweep does)", (r) => r.loadMs),
    row(`Fold only, ${events} events already in memory`, (r) => r.foldMs),
    row("Writing the log: 101 appends, one transaction per turn", (r) => r.buildMs),
    "",
    "Checkpoint + tail and full replay produce the same state (checked by the benchmark and by",
    "test/sessions/state.test.ts).",
    ""
  ].join("\n")
  const target = Path.resolve(import.meta.dirname, "../../BENCHMARKS-sessions.md")
  Fs.writeFileSync(target, report)
  console.log(report)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
