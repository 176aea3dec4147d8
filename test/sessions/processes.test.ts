/**
 * Sessions across server processes: a process killed mid-turn (SIGKILL) leaves a turn that the next process
 * marks failed; and, on PostgreSQL, two servers on one database — approve on the other process, follow a turn
 * run by the other process, and sweep from both.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startOpenAIFake } from "../fakes/openai.ts"
import { sharedPostgres, startGateway } from "../harness.ts"
import { call, serviceKey } from "../http.ts"
import { listeningPort, start } from "../process.ts"
import { approve, createSession, eventLog, getSession, MODEL, post, readSse, turn, waitUntil } from "./helpers.ts"

/** The server in one Node process (tsx as a loader, not the tsx CLI, whose child would survive a SIGKILL). */
const startServer = (env: Record<string, string>) => start(process.execPath, ["--import", "tsx", "layers/main/node.ts"], env)

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

describe("a process killed mid-turn", () => {
  it("leaves the turn to be marked failed (turn_interrupted) by the next process; the session stays usable", async () => {
    const openai = await startOpenAIFake({ apiKey: "sk-fake" })
    cleanups.push(() => openai.close())
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gw-crash-"))
    cleanups.push(async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
    const postgres = process.env.TEST_DATABASE_URL ? await sharedPostgres() : undefined
    if (postgres) cleanups.push(() => postgres.drop())
    const env = {
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: postgres?.url ?? "",
      MASTER_KEY: Crypto.randomBytes(32).toString("base64"),
      LOG_LEVEL: "info",
      BOOTSTRAP_DEFAULT_PROJECT: "true",
      OPENAI_BASE_URL: openai.baseUrl,
      OPENAI_API_KEY: "sk-fake",
      SESSION_TURN_LEASE_MS: "3000",
      SESSION_SWEEP_INTERVAL_MS: "300"
    }

    const first = startServer(env)
    cleanups.push(() => first.stop("SIGKILL"))
    const base = `http://127.0.0.1:${await listeningPort(first)}`
    const apiKey = (await first.waitFor(/sak_[A-Za-z0-9_-]{43}/))[0]
    const created = await call(base, "POST", "/v1/sessions", { headers: serviceKey(apiKey), json: {} })
    const sessionId = (created.body as { id: string }).id

    // The upstream sends two pieces and then nothing: the turn is mid-answer when the process dies.
    openai.enqueue({ text: ["Once ", "upon ", "a time"], stallAfterEvents: 3 })
    const response = await fetch(`${base}/v1/sessions/${sessionId}/turns`, {
      method: "POST",
      headers: { ...serviceKey(apiKey), "content-type": "application/json" },
      body: JSON.stringify({ input: "tell a story", model: MODEL })
    })
    const seen = (await readSse(response, { stopAfter: 3 })).events
    expect(seen.map((e) => e.event)).toEqual(["turn.started", "response.output_text.delta", "response.output_text.delta"])
    expect(await first.stop("SIGKILL")).toBe(null)

    const second = startServer({ ...env, BOOTSTRAP_DEFAULT_PROJECT: "false" })
    cleanups.push(() => second.stop("SIGKILL"))
    const base2 = `http://127.0.0.1:${await listeningPort(second)}`
    const logOf = async () =>
      (await call(base2, "GET", `/v1/sessions/${sessionId}/events?limit=1000`, { headers: serviceKey(apiKey) })).body as {
        data: Array<{ event_type: string; payload: { error?: { code: string } } }>
      }
    await waitUntil(async () => (await logOf()).data.some((e) => e.event_type === "turn.failed"), 20_000, "the turn to be failed")
      .catch(async (error) => {
        throw new Error(`${error}\nlog: ${JSON.stringify(await logOf())}\nsecond process:\n${second.output().split("\n").filter((l) => !l.includes('"request"')).join("\n").slice(-3000)}`)
      })
    const log = await logOf()
    expect(log.data.map((e) => e.event_type)).toEqual([
      "session.created",
      "turn.input",
      "turn.started",
      "response.output_text.delta",
      "response.output_text.delta",
      "turn.failed"
    ])
    expect(log.data.at(-1)!.payload.error?.code).toBe("turn_interrupted")
    const session = (await call(base2, "GET", `/v1/sessions/${sessionId}`, { headers: serviceKey(apiKey) })).body
    expect(session).toMatchObject({ status: "active", turn_count: 1 })

    openai.enqueue({ text: "The end." })
    const again = await fetch(`${base2}/v1/sessions/${sessionId}/turns`, {
      method: "POST",
      headers: { ...serviceKey(apiKey), "content-type": "application/json" },
      body: JSON.stringify({ input: "finish it", model: MODEL })
    })
    const events = (await readSse(again)).events
    expect(events.at(-1)).toMatchObject({ event: "turn.completed", data: { turn_number: 2, output: "The end." } })
    expect(await second.stop("SIGTERM")).toBe(0)
  }, 120_000)
})

describe.skipIf(!process.env.TEST_DATABASE_URL)("two servers on one PostgreSQL database", () => {
  it("a turn paused on one server is approved on the other, which runs the rest of it", async () => {
    const openai = await startOpenAIFake({ apiKey: "sk-fake" })
    cleanups.push(() => openai.close())
    const db = await sharedPostgres()
    cleanups.push(() => db.drop())
    const env = { OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: "sk-fake", SESSION_STREAM_POLL_MS: "100" }
    const a = await startGateway({ env, databaseUrl: db.url })
    cleanups.push(() => a.close())
    const b = await startGateway({ env, databaseUrl: db.url })
    cleanups.push(() => b.close())
    // One project, used through both servers.
    const bAsA = { ...b, project: a.project }

    const session = await createSession(a)
    openai.enqueue({ toolCalls: [{ id: "call_x", name: "lookup", arguments: { q: "x" } }] })
    const paused = await turn(a, session.id, { input: "look it up", tools: [{ type: "function", function: { name: "lookup" } }] })
    const actionId = paused.at(-1)!.data.action_id as string
    expect(((await getSession(bAsA, session.id)).body as { status: string }).status).toBe("paused")

    openai.enqueue({ text: ["Found ", "it."], chunkDelayMs: 50 })
    const resumed = await approve(bAsA, session.id, { action_id: actionId, tool_results: [{ action_id: actionId, output: "x=1" }] })
    expect(resumed.map((e) => e.event)).toEqual(["turn.resumed", "response.output_text.delta", "response.output_text.delta", "turn.completed"])
    expect(resumed.at(-1)!.data).toMatchObject({ turn_number: 1, output: "Found it." })
    const messages = (openai.lastRequest()!.body as { messages: Array<Record<string, unknown>> }).messages
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_x", content: "x=1" })
    expect(((await getSession(a, session.id)).body as { status: string }).status).toBe("active")
  }, 60_000)

  it("a client reconnecting to the other server follows the turn live, without gaps or duplicates", async () => {
    const openai = await startOpenAIFake({ apiKey: "sk-fake" })
    cleanups.push(() => openai.close())
    const db = await sharedPostgres()
    cleanups.push(() => db.drop())
    const env = { OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: "sk-fake", SESSION_STREAM_POLL_MS: "50" }
    const a = await startGateway({ env, databaseUrl: db.url })
    cleanups.push(() => a.close())
    const b = await startGateway({ env, databaseUrl: db.url })
    cleanups.push(() => b.close())

    const session = await createSession(a)
    const words = ["1 ", "2 ", "3 ", "4 ", "5 ", "6"]
    openai.enqueue({ text: words, chunkDelayMs: 120 })
    const response = await post(a, `/v1/sessions/${session.id}/turns`, { input: "count", model: MODEL })
    const before = (await readSse(response, { stopAfter: 2 })).events
    const followed = await fetch(`${b.baseUrl}/v1/sessions/${session.id}/stream`, {
      headers: { ...serviceKey(a.project.apiKey), "last-event-id": before.at(-1)!.id! }
    })
    const after = (await readSse(followed)).events
    const all = [...before, ...after]
    expect(all.at(-1)!.event).toBe("turn.completed")
    expect(all.filter((e) => e.event === "response.output_text.delta").map((e) => e.data.delta).join("")).toBe(words.join(""))
    const ids = all.map((e) => Number(e.id))
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
    expect(new Set(ids).size).toBe(ids.length)
    const log = await eventLog(a, session.id)
    expect(log.data.filter((e) => e.event_type === "response.output_text.delta")).toHaveLength(words.length)
  }, 60_000)

  it("a server that stops gracefully fails its running turns (turn_interrupted) and frees the session", async () => {
    const openai = await startOpenAIFake({ apiKey: "sk-fake" })
    cleanups.push(() => openai.close())
    const db = await sharedPostgres()
    cleanups.push(() => db.drop())
    const env = { OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: "sk-fake" }
    const a = await startGateway({ env, databaseUrl: db.url })
    const session = await createSession(a)
    openai.enqueue({ text: ["never ", "ends"], stallAfterEvents: 2 })
    const response = await post(a, `/v1/sessions/${session.id}/turns`, { input: "hang", model: MODEL })
    // The client has gone (an attached stream is drained like any in-flight request; see docs/sessions.md).
    await readSse(response, { stopAfter: 2 })
    const started = Date.now()
    await a.close()
    expect(Date.now() - started).toBeLessThan(10_000)

    const b = await startGateway({ env, databaseUrl: db.url })
    cleanups.push(() => b.close())
    const bAsA = { ...b, project: a.project }
    const log = await eventLog(bAsA, session.id)
    expect(log.data.at(-1)).toMatchObject({ event_type: "turn.failed", payload: { error: { code: "turn_interrupted" } } })
    openai.enqueue({ text: "back" })
    const next = await turn(bAsA, session.id, { input: "again" })
    expect(next.at(-1)!.data).toMatchObject({ turn_number: 2, output: "back" })
  }, 60_000)
})
