/**
 * Webhook delivery benchmark (`npm run bench:webhooks`; not part of the test suite).
 *
 * Starts the real gateway (harness) on a fresh PostgreSQL database (`TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test; `--pglite` for the embedded database) and a local receiver that
 * answers 200 at once, then measures:
 *
 * - commit-to-first-attempt latency: events published one at a time (20 ms apart), from the moment the
 *   publishing transaction committed to the moment the receiver had the request;
 * - drain throughput: deliveries per second for a burst of events committed in one transaction;
 * - sustained throughput: deliveries per second while 4 publishers commit events concurrently.
 *
 * Writes the results to BENCHMARKS-webhooks.md (`--out <file>` to change).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import { Events } from "../../modules/events/Service.ts"
import { startReceiver, type Receiver } from "../fakes/webhook-receiver.ts"
import { type Gateway, startGateway } from "../harness.ts"

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const option = (name: string, fallback: string) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 && args[index + 1] !== undefined ? args[index + 1]! : fallback
}

const pglite = flag("pglite")
if (pglite) delete process.env.TEST_DATABASE_URL
else process.env.TEST_DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/test"
const LATENCY_EVENTS = Number(option("latency-events", "200"))
const BURST_EVENTS = Number(option("burst-events", "2000"))
const SUSTAINED_EVENTS = Number(option("sustained-events", "2000"))
const CONCURRENCIES = option("concurrency", "16,64").split(",").map(Number)
const OUT = option("out", "BENCHMARKS-webhooks.md")

const now = () => performance.timeOrigin + performance.now()

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN
}

/** Publishes `count` events in one transaction; answers their ids and the commit time. */
const publishBatch = (gw: Gateway, projectId: string, count: number) =>
  gw.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* Events
    const published = yield* sql.withTransaction(
      Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        events.publish({ projectId, type: "session.turn_completed", data: { session_id: `sess_${i}`, turn_number: i } }))
    )
    return { ids: published.map((event) => event.id), committedAt: now() }
  }))

const firstArrivals = (receiver: Receiver) => {
  const arrivals = new Map<string, number>()
  for (const request of receiver.received) {
    const id = (JSON.parse(request.body) as { data: { event_id: string } }).data.event_id
    if (!arrivals.has(id)) arrivals.set(id, request.receivedAt)
  }
  return arrivals
}

interface Result {
  readonly concurrency: number
  readonly latency: { p50: number; p95: number; p99: number; max: number }
  readonly burst: { events: number; seconds: number; perSecond: number }
  readonly sustained: { events: number; seconds: number; perSecond: number; p50: number; p99: number }
}

const run = async (concurrency: number): Promise<Result> => {
  const receiver = await startReceiver()
  const gw = await startGateway({
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", QUEUE_CONCURRENCY: String(concurrency), LOG_LEVEL: "warning" }
  })
  try {
    const endpoint = await fetch(`${gw.baseUrl}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.project.secretKey}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url, events: ["session"] })
    })
    if (endpoint.status !== 201) throw new Error(`cannot create the endpoint: ${await endpoint.text()}`)
    const waitFor = (count: number) => receiver.waitFor(count, 600_000)

    // Latency: one event at a time on an idle system.
    await publishBatch(gw, gw.project.id, 5)
    await waitFor(5)
    receiver.received.length = 0
    const commits = new Map<string, number>()
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const { ids, committedAt } = await publishBatch(gw, gw.project.id, 1)
      commits.set(ids[0]!, committedAt)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await waitFor(LATENCY_EVENTS)
    const arrivals = firstArrivals(receiver)
    const latencies = [...commits].map(([id, at]) => arrivals.get(id)! - at)

    // Drain: a burst committed at once.
    receiver.received.length = 0
    const burst = await publishBatch(gw, gw.project.id, BURST_EVENTS)
    await waitFor(BURST_EVENTS)
    const burstSeconds = (Math.max(...receiver.received.map((r) => r.receivedAt)) - burst.committedAt) / 1000

    // Sustained: 4 publishers, 10 events per transaction, while the worker delivers.
    receiver.received.length = 0
    const started = now()
    const sustainedCommits = new Map<string, number>()
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let sent = 0; sent < SUSTAINED_EVENTS / 4; sent += 10) {
        const { ids, committedAt } = await publishBatch(gw, gw.project.id, 10)
        for (const id of ids) sustainedCommits.set(id, committedAt)
      }
    }))
    await waitFor(SUSTAINED_EVENTS)
    const sustainedArrivals = firstArrivals(receiver)
    const sustainedSeconds = (Math.max(...receiver.received.map((r) => r.receivedAt)) - started) / 1000
    const sustainedLatencies = [...sustainedCommits].map(([id, at]) => sustainedArrivals.get(id)! - at)

    return {
      concurrency,
      latency: {
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies)
      },
      burst: { events: BURST_EVENTS, seconds: burstSeconds, perSecond: BURST_EVENTS / burstSeconds },
      sustained: {
        events: SUSTAINED_EVENTS,
        seconds: sustainedSeconds,
        perSecond: SUSTAINED_EVENTS / sustainedSeconds,
        p50: percentile(sustainedLatencies, 50),
        p99: percentile(sustainedLatencies, 99)
      }
    }
  } finally {
    await gw.close()
    await receiver.close()
  }
}

const ms = (value: number) => `${value.toFixed(1)} ms`

const main = async () => {
  const results: Array<Result> = []
  for (const concurrency of CONCURRENCIES) {
    console.log(`running with QUEUE_CONCURRENCY=${concurrency} on ${pglite ? "PGlite" : "PostgreSQL"}...`)
    const result = await run(concurrency)
    console.log(JSON.stringify(result))
    results.push(result)
  }
  const backend = pglite ? "PGlite (embedded)" : "PostgreSQL (local server)"
  const lines = [
    "# Webhook delivery benchmark",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:webhooks${pglite ? " -- --pglite" : ""}\` ` +
    `(test/bench/webhooks.ts) on ${backend}, Node ${process.version}, ${Os.cpus().length} CPUs ` +
    `(${Os.cpus()[0]?.model.trim() ?? "unknown"}), load average ${Os.loadavg()[0]!.toFixed(1)} at the end ` +
    `(the machine was shared with other work). The receiver is a local HTTP server answering 200 at once; one ` +
    `endpoint; default poll interval (500 ms), so first attempts come from the in-process wake-up and, on ` +
    `PostgreSQL, LISTEN/NOTIFY after commit.`,
    "",
    "## Commit to first attempt (events published one at a time, 20 ms apart)",
    "",
    "| QUEUE_CONCURRENCY | events | p50 | p95 | p99 | max |",
    "|---|---|---|---|---|---|",
    ...results.map((r) =>
      `| ${r.concurrency} | ${LATENCY_EVENTS} | ${ms(r.latency.p50)} | ${ms(r.latency.p95)} | ${ms(r.latency.p99)} | ${ms(r.latency.max)} |`
    ),
    "",
    "## Deliveries per second",
    "",
    "| QUEUE_CONCURRENCY | burst (one commit) | sustained (4 publishers) | sustained commit→first attempt p50 / p99 |",
    "|---|---|---|---|",
    ...results.map((r) =>
      `| ${r.concurrency} | ${r.burst.perSecond.toFixed(0)}/s (${r.burst.events} in ${r.burst.seconds.toFixed(2)} s) | ` +
      `${r.sustained.perSecond.toFixed(0)}/s (${r.sustained.events} in ${r.sustained.seconds.toFixed(2)} s) | ` +
      `${ms(r.sustained.p50)} / ${ms(r.sustained.p99)} |`
    ),
    ""
  ]
  Fs.writeFileSync(OUT, lines.join("\n"))
  console.log(lines.join("\n"))
}

main().then(() => process.exit(0), (error: unknown) => {
  console.error(error)
  process.exit(1)
})
