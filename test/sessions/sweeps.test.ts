/**
 * Idle expiry (7 days, tested with Effect's TestClock) and crash recovery (a turn whose owner's lease ran out is
 * failed), through the service's own sweep and through the periodic sweep of a running server.
 */
import { Effect, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Sessions } from "../../modules/sessions/Service.ts"
import { call, serviceKey } from "../http.ts"
import { createSession, type Env, eventLog, getSession, MODEL, post, readSse, startSessionsEnv, turn, waitUntil } from "./helpers.ts"

const DAY = 24 * 3600 * 1000
const IDLE = 7 * DAY

let env: Env
beforeAll(async () => {
  // The periodic sweep is slowed down so that only the explicit sweeps below act.
  env = await startSessionsEnv({ SESSION_SWEEP_INTERVAL_MS: "3600000" })
})
afterAll(() => env?.close())

/** Runs one sweep with the clock at `ms` (Effect TestClock). */
const sweepAt = (ms: number) =>
  env.gw.run(
    Effect.gen(function*() {
      yield* TestClock.setTime(ms)
      return yield* Effect.flatMap(Sessions, (sessions) => sessions.sweep)
    }).pipe(Effect.provide(TestContext.TestContext))
  )

const statusOf = async (id: string) => ((await getSession(env.gw, id)).body as { status: string }).status

describe("idle expiry", () => {
  it("a session idle for 7 days becomes completed; one millisecond earlier it does not", async () => {
    const session = await createSession(env.gw)
    const lastActivity = Date.parse(session.updated_at)
    await sweepAt(lastActivity + IDLE - 1)
    expect(await statusOf(session.id)).toBe("active")
    await sweepAt(lastActivity + IDLE)
    expect(await statusOf(session.id)).toBe("completed")

    const log = await eventLog(env.gw, session.id)
    expect(log.data.at(-1)).toMatchObject({ event_type: "session.completed", payload: { reason: "expired" } })
    const listed = await call(env.gw.baseUrl, "GET", "/v1/sessions?status=completed&limit=100", { headers: serviceKey(env.gw.project.apiKey) })
    expect((listed.body as { data: Array<{ id: string }> }).data.map((s) => s.id)).toContain(session.id)

    const res = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "hello?", model: MODEL })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("session_completed")
  })

  it("activity restarts the idle clock: a turn after creation keeps the session open past creation + 7 days", async () => {
    const session = await createSession(env.gw)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await turn(env.gw, session.id, { input: "still here" })
    await sweepAt(Date.parse(session.created_at) + IDLE)
    expect(await statusOf(session.id)).toBe("active")
    const after = (await getSession(env.gw, session.id)).body as { updated_at: string }
    await sweepAt(Date.parse(after.updated_at) + IDLE)
    expect(await statusOf(session.id)).toBe("completed")
  })

  it("a paused session expires too: its turn fails with session_expired, then approve answers 409 session_completed", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ toolCalls: [{ name: "lookup", arguments: {} }] })
    const paused = await turn(env.gw, session.id, { input: "look", tools: [{ type: "function", function: { name: "lookup" } }] })
    const actionId = paused.at(-1)!.data.action_id as string
    const updated = ((await getSession(env.gw, session.id)).body as { updated_at: string }).updated_at
    await sweepAt(Date.parse(updated) + IDLE)
    expect(await statusOf(session.id)).toBe("completed")
    const tail = (await eventLog(env.gw, session.id)).data.slice(-2)
    expect(tail.map((e) => [e.event_type, e.payload.error?.code ?? e.payload.reason])).toEqual([
      ["turn.failed", "session_expired"],
      ["session.completed", "expired"]
    ])
    const res = await post(env.gw, `/v1/sessions/${session.id}/approve`, { action_id: actionId, tool_results: [{ action_id: actionId, output: "x" }] })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("session_completed")
  })

  it("concurrent sweeps complete a session once", async () => {
    const session = await createSession(env.gw)
    const at = Date.parse(session.updated_at) + IDLE + 1000
    await Promise.all([sweepAt(at), sweepAt(at), sweepAt(at)])
    const completions = (await eventLog(env.gw, session.id)).data.filter((e) => e.event_type === "session.completed")
    expect(completions).toHaveLength(1)
  })
})

describe("crash recovery", () => {
  /** Opens a turn held by a process that no longer runs: what a crash mid-turn leaves behind. */
  const orphanTurn = (sessionId: string, leaseUntil: Date) =>
    env.gw.run(Effect.gen(function*() {
      const sessions = yield* Sessions
      const state = yield* Effect.flatMap(sessions.log.load(sessionId), Effect.orElseFail(() => new Error("no session")))
      yield* sessions.log.append(sessionId, state, [
        { type: "turn.input", turn_number: 1, input: "lost", model: MODEL, instructions: null, tools: [], pause_on_tool_calls: true },
        { type: "turn.started", turn_number: 1 },
        { type: "response.output_text.delta", delta: "half an ans" }
      ], { lease: { _tag: "acquire", owner: "proc_dead", until: leaseUntil } })
    }))

  it("a turn whose lease ran out is marked failed (turn_interrupted); a live lease is left alone", async () => {
    const crashed = await createSession(env.gw)
    const alive = await createSession(env.gw)
    await orphanTurn(crashed.id, new Date(Date.now() - 1000))
    await orphanTurn(alive.id, new Date(Date.now() + 60_000))

    // A client following the orphan sees it end as soon as the sweep fails it.
    const following = fetch(`${env.gw.baseUrl}/v1/sessions/${crashed.id}/stream?after=3`, {
      headers: serviceKey(env.gw.project.apiKey)
    }).then((res) => readSse(res))

    await sweepAt(Date.now())
    const events = (await following).events
    expect(events.map((e) => e.event)).toEqual(["response.output_text.delta", "turn.failed"])
    expect(events[1]!.data).toEqual({
      turn_number: 1,
      error: { code: "turn_interrupted", message: expect.any(String) }
    })

    const fetched = (await getSession(env.gw, crashed.id)).body as { status: string; turn_count: number }
    expect(fetched).toMatchObject({ status: "active", turn_count: 1 })
    const busy = await post(env.gw, `/v1/sessions/${alive.id}/turns`, { input: "x", model: MODEL })
    expect(busy.status).toBe(409)

    // The failed turn leaves no trace in the conversation; the next turn runs normally.
    env.openai.enqueue({ text: "fresh" })
    const next = await turn(env.gw, crashed.id, { input: "again" })
    expect(next.at(-1)!.data).toMatchObject({ turn_number: 2, output: "fresh" })
    expect((env.openai.lastRequest()!.body as { messages: unknown[] }).messages).toEqual([{ role: "user", content: "again" }])
  })
})

describe("the periodic sweep of a running server", () => {
  let fast: Env
  beforeAll(async () => {
    fast = await startSessionsEnv({ SESSION_IDLE_TTL_SECONDS: "1", SESSION_SWEEP_INTERVAL_MS: "200" })
  })
  afterAll(() => fast?.close())

  it("completes idle sessions on its own", async () => {
    const session = await createSession(fast.gw)
    await waitUntil(async () => ((await getSession(fast.gw, session.id)).body as { status: string }).status === "completed", 5000, "expiry")
  })
})
