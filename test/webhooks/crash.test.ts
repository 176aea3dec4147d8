/**
 * Crash safety: the real server runs as a child process (`npx tsx layers/main/node.ts`) on a fresh database
 * (PostgreSQL when TEST_DATABASE_URL is set, else PGlite in a DATA_DIR). Deliveries are in flight when it is
 * killed with SIGKILL; after a restart every delivery arrives, and the repeats carry the same event_id.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, expect, it } from "vitest"
import { verifyWebhookSignature } from "../../sdk/webhooks.ts"
import { startReceiver, type Receiver } from "../fakes/webhook-receiver.ts"
import { bearer, call } from "../http.ts"
import { eventually } from "./helpers.ts"

const PINGS = 24
const CONCURRENCY = 8

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => address !== null && typeof address === "object" ? resolve(address.port) : reject(new Error("no port")))
    })
  })

const adminQuery = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
      Effect.scoped
    )
  )

const cleanups: Array<() => Promise<unknown>> = []

interface Server {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Starts `npx tsx layers/main/node.ts` in its own process group, so a signal reaches the node process too. */
const startServer = async (env: Record<string, string>, baseUrl: string): Promise<Server> => {
  const child = spawn("npx", ["tsx", "layers/main/node.ts"], {
    cwd: Path.resolve(import.meta.dirname, "../.."),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  // Registered before waiting, so a server that never comes up is killed too.
  cleanups.push(() => killGroup({ child, output: () => output, exited }, "SIGKILL"))
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`)
    const ok = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) }).then((res) => res.ok, () => false)
    return ok || undefined
  }, 150_000, "server start")
  return { child, output: () => output, exited }
}

const killGroup = (server: Server, signal: NodeJS.Signals) => {
  if (server.child.pid !== undefined && server.child.exitCode === null) {
    try {
      process.kill(-server.child.pid, signal)
    } catch {
      // already gone
    }
  }
  return server.exited
}

let receiver: Receiver | undefined
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
  await receiver?.close()
})

it("deliveries in flight when the server is SIGKILLed are delivered after a restart; repeats share their event_id", async () => {
  receiver = await startReceiver()
  receiver.otherwise = () => ({ hang: true })
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gw-crash-"))
  cleanups.push(async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
  const env: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: dataDir,
    MASTER_KEY: Crypto.randomBytes(32).toString("base64"),
    BOOTSTRAP_DEFAULT_PROJECT: "true",
    LOG_LEVEL: "warning",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOK_TIMEOUT_MS: "60000",
    QUEUE_LEASE_MS: "2000",
    QUEUE_POLL_INTERVAL_MS: "100",
    QUEUE_CONCURRENCY: String(CONCURRENCY)
  }
  const adminUrl = process.env.TEST_DATABASE_URL
  if (adminUrl) {
    const name = `gw_crash_${Crypto.randomBytes(6).toString("hex")}`
    await adminQuery(adminUrl, `CREATE DATABASE ${name}`)
    cleanups.push(() => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    env.DATABASE_URL = url.toString()
  }

  const first = await startServer(env, baseUrl)
  const secretKey = await eventually(async () => /Secret key.*?(csk_[A-Za-z0-9_-]+)/.exec(first.output())?.[1], 10_000, "bootstrap keys")
  const headers = bearer(secretKey)
  const created = await call(baseUrl, "POST", "/v1/webhooks", { headers, json: { url: receiver.url } })
  expect(created.status, created.text).toBe(201)
  const endpoint = created.body as { id: string; secret: string }
  const deliveries: Array<{ id: string; event: { id: string } }> = []
  for (let i = 0; i < PINGS; i++) {
    const res = await call(baseUrl, "POST", `/v1/webhooks/${endpoint.id}/test`, { headers })
    expect(res.status).toBe(201)
    deliveries.push(res.body as { id: string; event: { id: string } })
  }
  // A full worker's worth of attempts is waiting on the receiver, the rest are queued.
  await receiver.waitFor(CONCURRENCY, 30_000)
  expect(await killGroup(first, "SIGKILL")).toBeNull()
  const inFlight = receiver.received.length
  expect(inFlight).toBeLessThan(PINGS)

  receiver.otherwise = () => ({ status: 200, body: "ok" })
  const second = await startServer(env, baseUrl)
  await eventually(async () => {
    const res = await call(baseUrl, "GET", "/v1/webhook-deliveries?status=succeeded&limit=100", { headers })
    return (res.body as { data: Array<unknown> }).data.length === PINGS || undefined
  }, 60_000, "every delivery to succeed")

  const received = receiver.received.map((request) => ({
    request,
    eventId: (JSON.parse(request.body) as { data: { event_id: string } }).data.event_id,
    deliveryId: request.headers["x-webhook-delivery"]
  }))
  // Nothing lost: every event arrived.
  expect(new Set(received.map((r) => r.eventId))).toEqual(new Set(deliveries.map((d) => d.event.id)))
  // Repeats are the same delivery again, with the same event_id, and every copy is correctly signed.
  const byEvent = new Map<string, Set<unknown>>()
  for (const { eventId, deliveryId } of received) byEvent.set(eventId, (byEvent.get(eventId) ?? new Set()).add(deliveryId))
  for (const [eventId, deliveryIds] of byEvent) {
    expect(deliveryIds.size, eventId).toBe(1)
    expect([...deliveryIds][0]).toBe(deliveries.find((d) => d.event.id === eventId)!.id)
  }
  const repeated = [...byEvent.keys()].filter((id) => received.filter((r) => r.eventId === id).length > 1)
  expect(repeated.length).toBeGreaterThanOrEqual(inFlight)
  expect(received.length).toBe(PINGS + repeated.length)
  for (const { request } of received) {
    expect(verifyWebhookSignature(endpoint.secret, request.body, request.headers["x-webhook-signature"])).toBe(true)
  }
  await killGroup(second, "SIGTERM")
}, 420_000)
