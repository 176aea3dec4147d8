/**
 * Turns through the real server and the chat gateway against the fake OpenAI upstream (which streams with real
 * delays): SSE framing and payloads, approval rules 3-5, approve/reject, parallel tool calls, errors, cost,
 * durability across a client disconnect, and reconnecting with Last-Event-ID.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { bearer, call, serviceKey } from "../http.ts"
import {
  approve,
  createSession,
  type Env,
  eventLog,
  getSession,
  MODEL,
  names,
  post,
  readSse,
  startSessionsEnv,
  turn,
  waitUntil
} from "./helpers.ts"

let env: Env
beforeAll(async () => {
  env = await startSessionsEnv({ UPSTREAM_TIMEOUT_MS: "3000" })
})
afterAll(() => env?.close())
beforeEach(() => env.openai.reset())

const keysOf = (value: unknown) => Object.keys(value as object).sort()

const weather = {
  type: "function",
  function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } } } }
}
const sendEmail = { type: "function", function: { name: "send_email", parameters: { type: "object" } } }

const errorOf = async (response: Response) => {
  const body = (await response.json()) as { error: { code: string; type: string; param: string | null }; status: string }
  expect(body.status).toBe("failed")
  return { status: response.status, code: body.error.code, param: body.error.param }
}

describe("a plain turn", () => {
  it("streams turn.started, the deltas as they arrive, then turn.completed, each with id = its sequence", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["Hel", "lo", " world"], chunkDelayMs: 80, usage: { promptTokens: 20, completionTokens: 3 } })
    const events = await turn(env.gw, session.id, { input: "Say hello", instructions: "Be brief." })

    expect(names(events)).toEqual([
      "turn.started",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "turn.completed"
    ])
    expect(events[0]!.data).toEqual({ turn_number: 1 })
    expect(events.slice(1, 4).map((e) => e.data)).toEqual([{ delta: "Hel" }, { delta: "lo" }, { delta: " world" }])
    const completed = events[4]!.data
    expect(keysOf(completed)).toEqual(["output", "turn_number", "usage"])
    expect(completed.turn_number).toBe(1)
    expect(completed.output).toBe("Hello world")
    expect(completed.usage).toMatchObject({ input_tokens: 20, output_tokens: 3, total_tokens: 23 })
    expect(completed.usage.cost).toBeGreaterThan(0)

    // Deltas reach the client while the upstream is still producing: not buffered to the end.
    expect(events[4]!.at - events[1]!.at).toBeGreaterThanOrEqual(120)

    // Each SSE id is the event's sequence in the log.
    const log = await eventLog(env.gw, session.id)
    for (const event of events) {
      const row = log.data.find((r) => String(r.sequence) === event.id)
      expect(row?.event_type).toBe(event.event)
      expect(row?.payload).toEqual(event.data)
    }

    // The model was called once, through the chat gateway, with the instructions first.
    const body = env.openai.lastRequest()!.body as { model: string; messages: Array<{ role: string; content: string }>; stream: boolean }
    expect(body.model).toBe(MODEL)
    expect(body.stream).toBe(true)
    expect(body.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }])

    const fetched = (await getSession(env.gw, session.id)).body as { turn_count: number; status: string; total_cost: number }
    expect(fetched).toMatchObject({ turn_count: 1, status: "active" })
    expect(fetched.total_cost).toBeCloseTo(completed.usage.cost, 10)
  })

  it("a second turn sends the conversation so far; total_cost sums each turn's cost", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: "First answer", usage: { promptTokens: 100, completionTokens: 50 } })
    env.openai.enqueue({ text: "Second answer", usage: { promptTokens: 300, completionTokens: 70 } })
    const first = await turn(env.gw, session.id, { input: "one" })
    const second = await turn(env.gw, session.id, { input: "two", instructions: "Answer in French." })
    expect(second[0]!.data).toEqual({ turn_number: 2 })
    const messages = (env.openai.lastRequest()!.body as { messages: unknown[] }).messages
    expect(messages).toEqual([
      { role: "system", content: "Answer in French." },
      { role: "user", content: "one" },
      { role: "assistant", content: "First answer" },
      { role: "user", content: "two" }
    ])
    const costs = [first, second].map((events) => events.at(-1)!.data.usage.cost as number)
    const fetched = (await getSession(env.gw, session.id)).body as { turn_count: number; total_cost: number }
    expect(fetched.turn_count).toBe(2)
    expect(fetched.total_cost).toBeCloseTo(costs[0]! + costs[1]!, 10)
  })

  it("usage rows of the turn's model calls carry the session id", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: "ok" })
    await turn(env.gw, session.id, { input: "bill me" })
    await waitUntil(async () => {
      const res = await call(env.gw.baseUrl, "GET", "/v1/usage?limit=100", { headers: bearer(env.gw.project.secretKey) })
      const rows = (res.body as { data: Array<{ session_id: string | null; kind: string }> }).data
      return rows.some((row) => row.session_id === session.id && row.kind === "session")
    }, 5000, "a usage row with the session id")
  })

  it("an upstream failure ends the turn with turn.failed; the session stays usable", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["partial"], streamError: { message: "boom" } })
    const events = await turn(env.gw, session.id, { input: "fail please" })
    expect(names(events)).toEqual(["turn.started", "response.output_text.delta", "turn.failed"])
    expect(events[2]!.data).toMatchObject({ turn_number: 1, error: { code: expect.any(String) } })
    env.openai.enqueue({ text: "fine now" })
    const next = await turn(env.gw, session.id, { input: "again" })
    expect(next.at(-1)!.data).toMatchObject({ turn_number: 2, output: "fine now" })
  })
})

describe("approval rules", () => {
  it("pause_on_tool_calls with no needsApproval: every call pauses; approve sends the result and continues the same turn", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["Let me check."], toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Paris" } }] })
    const paused = await turn(env.gw, session.id, { input: "Weather in Paris?", tools: [weather], pause_on_tool_calls: true })
    expect(names(paused)).toEqual(["turn.started", "response.output_text.delta", "turn.paused"])
    const pause = paused[2]!.data
    expect(keysOf(pause)).toEqual(["action_id", "arguments", "reason", "tool"])
    expect(pause).toMatchObject({ reason: "approval_required", tool: "get_weather", arguments: { city: "Paris" } })
    expect(pause.action_id).toMatch(/^act_/)
    expect(((await getSession(env.gw, session.id)).body as { status: string }).status).toBe("paused")
    // A paused session has no model call in flight.
    expect(env.openai.chatRequests).toHaveLength(1)

    env.openai.enqueue({ text: ["It is ", "sunny."], chunkDelayMs: 30 })
    const resumed = await approve(env.gw, session.id, {
      action_id: pause.action_id,
      tool_results: [{ action_id: pause.action_id, output: "{\"sky\":\"sunny\"}" }]
    })
    expect(names(resumed)).toEqual([
      "turn.resumed",
      "response.output_text.delta",
      "response.output_text.delta",
      "turn.completed"
    ])
    expect(resumed[0]!.data).toEqual({ action_id: pause.action_id, resolution: "approved" })
    expect(Number(resumed[0]!.id)).toBeGreaterThan(Number(paused[2]!.id))
    expect(resumed[3]!.data).toMatchObject({ turn_number: 1, output: "Let me check.It is sunny." })
    const messages = (env.openai.lastRequest()!.body as { messages: Array<Record<string, unknown>> }).messages
    expect(messages.slice(-3)).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [{ id: "call_w1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { role: "tool", tool_call_id: "call_w1", content: "{\"sky\":\"sunny\"}" }
    ])
    const fetched = (await getSession(env.gw, session.id)).body as { status: string; turn_count: number; total_cost: number }
    expect(fetched).toMatchObject({ status: "active", turn_count: 1 })
    // Both model calls of the turn are in its usage and cost.
    expect(resumed[3]!.data.usage.input_tokens).toBe(20)
    expect(fetched.total_cost).toBeCloseTo(resumed[3]!.data.usage.cost, 10)
  })

  it("with a needsApproval tool, only those tools pause: another tool's call completes the turn with the call in output", async () => {
    const tools = [{ ...sendEmail, needsApproval: true }, weather]
    const session = await createSession(env.gw)
    env.openai.enqueue({ toolCalls: [{ id: "call_a", name: "get_weather", arguments: { city: "Oslo" } }] })
    const free = await turn(env.gw, session.id, { input: "weather", tools, pause_on_tool_calls: true })
    expect(names(free)).toEqual(["turn.started", "turn.completed"])
    const output = free[1]!.data.output
    expect(output).toEqual({
      text: "",
      tool_calls: [{ action_id: expect.stringMatching(/^act_/), call_id: "call_a", name: "get_weather", arguments: { city: "Oslo" } }]
    })

    env.openai.enqueue({ toolCalls: [{ name: "send_email", arguments: { to: "a@b.c" } }] })
    const gated = await turn(env.gw, session.id, { input: "email", tools, pause_on_tool_calls: true })
    expect(names(gated)).toEqual(["turn.started", "turn.paused"])
    expect(gated[1]!.data).toMatchObject({ tool: "send_email", arguments: { to: "a@b.c" } })
  })

  it("pause_on_tool_calls false never pauses and ignores needsApproval: calls are returned in turn.completed.output", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: "Sending.", toolCalls: [{ id: "call_e", name: "send_email", arguments: "{\"to\":\"x@y.z\"}" }] })
    const events = await turn(env.gw, session.id, {
      input: "email",
      tools: [{ ...sendEmail, needsApproval: true }],
      pause_on_tool_calls: false
    })
    expect(names(events)).toEqual(["turn.started", "response.output_text.delta", "turn.completed"])
    expect(events[2]!.data.output).toMatchObject({ text: "Sending.", tool_calls: [{ call_id: "call_e", name: "send_email", arguments: { to: "x@y.z" } }] })
    expect(((await getSession(env.gw, session.id)).body as { status: string }).status).toBe("active")
    // The next turn's history answers the returned call so the upstream accepts it.
    env.openai.enqueue({ text: "ok" })
    await turn(env.gw, session.id, { input: "next" })
    const messages = (env.openai.lastRequest()!.body as { messages: Array<Record<string, unknown>> }).messages
    expect(messages.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_e" })
  })

  it("several tool calls in one step each get their own action_id; the turn resumes once all are approved", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({
      toolCalls: [
        { id: "call_1", name: "get_weather", arguments: { city: "Rome" } },
        { id: "call_2", name: "get_weather", arguments: { city: "Lima" } },
        { id: "call_3", name: "get_weather", arguments: { city: "Oslo" } }
      ]
    })
    const paused = await turn(env.gw, session.id, { input: "three cities", tools: [weather] })
    expect(names(paused)).toEqual(["turn.started", "turn.paused", "turn.paused", "turn.paused"])
    const actions = paused.slice(1).map((e) => e.data.action_id as string)
    expect(new Set(actions).size).toBe(3)
    expect(paused.slice(1).map((e) => e.data.arguments.city)).toEqual(["Rome", "Lima", "Oslo"])

    // Approving one leaves the turn paused (no model call); the stream holds just its turn.resumed.
    const one = await approve(env.gw, session.id, { action_id: actions[0], tool_results: [{ action_id: actions[0], output: "warm" }] })
    expect(names(one)).toEqual(["turn.resumed"])
    expect(((await getSession(env.gw, session.id)).body as { status: string }).status).toBe("paused")
    expect(env.openai.chatRequests).toHaveLength(1)

    env.openai.enqueue({ text: "Done." })
    const rest = await approve(env.gw, session.id, {
      action_id: actions[1],
      tool_results: [{ action_id: actions[1], output: "mild" }, { action_id: actions[2], output: "cold" }]
    })
    expect(names(rest)).toEqual(["turn.resumed", "turn.resumed", "response.output_text.delta", "turn.completed"])
    expect(rest.slice(0, 2).map((e) => e.data)).toEqual([
      { action_id: actions[1], resolution: "approved" },
      { action_id: actions[2], resolution: "approved" }
    ])
    const messages = (env.openai.lastRequest()!.body as { messages: Array<Record<string, unknown>> }).messages
    expect(messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "call_1", content: "warm" },
      { role: "tool", tool_call_id: "call_2", content: "mild" },
      { role: "tool", tool_call_id: "call_3", content: "cold" }
    ])
  })

  it("reject records the rejection and completes the turn without calling the model", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: "Sending now.", toolCalls: [{ id: "call_r", name: "send_email", arguments: { to: "boss" } }] })
    const paused = await turn(env.gw, session.id, { input: "email the boss", tools: [sendEmail] })
    const actionId = paused.at(-1)!.data.action_id as string
    const res = await call(env.gw.baseUrl, "POST", `/v1/sessions/${session.id}/reject`, {
      headers: serviceKey(env.gw.project.apiKey),
      json: { action_id: actionId }
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: session.id, action_id: actionId, resolution: "rejected", status: "completed" })
    expect(env.openai.chatRequests).toHaveLength(1)

    const log = await eventLog(env.gw, session.id, "turn_number=1")
    const tail = log.data.slice(-2)
    expect(tail.map((e) => e.event_type)).toEqual(["turn.resumed", "turn.completed"])
    expect(tail[0]!.payload).toEqual({ action_id: actionId, resolution: "rejected" })
    expect(tail[1]!.payload).toMatchObject({ turn_number: 1, output: "Sending now." })
    expect(((await getSession(env.gw, session.id)).body as { status: string }).status).toBe("active")

    // The next turn tells the model the call was rejected.
    env.openai.enqueue({ text: "Understood." })
    await turn(env.gw, session.id, { input: "ok" })
    const messages = (env.openai.lastRequest()!.body as { messages: Array<Record<string, unknown>> }).messages
    expect(messages.find((m) => m.role === "tool")).toEqual({ role: "tool", tool_call_id: "call_r", content: "The user rejected this tool call." })
  })
})

describe("errors", () => {
  const pausedSession = async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Bern" } }] })
    const paused = await turn(env.gw, session.id, { input: "weather", tools: [weather] })
    return { id: session.id, actionId: paused.at(-1)!.data.action_id as string }
  }

  it("approving an action twice answers 409 action_not_pending; an unknown or foreign action 404 action_not_found", async () => {
    const a = await pausedSession()
    const b = await pausedSession()
    expect(await errorOf(await post(env.gw, `/v1/sessions/${a.id}/approve`, { action_id: b.actionId, tool_results: [{ action_id: b.actionId, output: "x" }] })))
      .toMatchObject({ status: 404, code: "action_not_found", param: "action_id" })
    expect(await errorOf(await post(env.gw, `/v1/sessions/${a.id}/approve`, { action_id: "act_nope", tool_results: [] })))
      .toMatchObject({ status: 404, code: "action_not_found" })
    expect(await errorOf(await post(env.gw, `/v1/sessions/${a.id}/reject`, { action_id: b.actionId })))
      .toMatchObject({ status: 404, code: "action_not_found" })

    env.openai.enqueue({ text: "done" })
    await approve(env.gw, a.id, { action_id: a.actionId, tool_results: [{ action_id: a.actionId, output: "ok" }] })
    // The action is approved and the turn finished: it is no longer an open action of the session.
    expect((await errorOf(await post(env.gw, `/v1/sessions/${a.id}/approve`, { action_id: a.actionId, tool_results: [{ action_id: a.actionId, output: "again" }] }))).status)
      .toBe(404)
  })

  it("an action already resolved in an open turn answers 409 action_not_pending", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ toolCalls: [{ name: "get_weather", arguments: {} }, { name: "get_weather", arguments: {} }] })
    const paused = await turn(env.gw, session.id, { input: "two", tools: [weather] })
    const [first] = paused.filter((e) => e.event === "turn.paused").map((e) => e.data.action_id as string)
    await approve(env.gw, session.id, { action_id: first, tool_results: [{ action_id: first, output: "1" }] })
    expect(await errorOf(await post(env.gw, `/v1/sessions/${session.id}/approve`, { action_id: first, tool_results: [{ action_id: first, output: "1" }] })))
      .toMatchObject({ status: 409, code: "action_not_pending" })
    expect(await errorOf(await post(env.gw, `/v1/sessions/${session.id}/reject`, { action_id: first })))
      .toMatchObject({ status: 409, code: "action_not_pending" })
  })

  it("approve without an output for the action answers 400 tool_result_required", async () => {
    const a = await pausedSession()
    expect(await errorOf(await post(env.gw, `/v1/sessions/${a.id}/approve`, { action_id: a.actionId })))
      .toMatchObject({ status: 400, code: "tool_result_required", param: "tool_results" })
  })

  it("a turn while another runs, or while paused, answers 409 turn_in_progress", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["slow", " answer"], chunkDelayMs: 300 })
    const running = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "first", model: MODEL })
    expect(running.status).toBe(200)
    const second = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "second", model: MODEL })
    expect(await errorOf(second)).toMatchObject({ status: 409, code: "turn_in_progress" })
    await readSse(running)

    const paused = await pausedSession()
    expect(await errorOf(await post(env.gw, `/v1/sessions/${paused.id}/turns`, { input: "more", model: MODEL })))
      .toMatchObject({ status: 409, code: "turn_in_progress" })
  })

  it("web_search_preview answers 400 unsupported_tool; nothing is started", async () => {
    const session = await createSession(env.gw)
    const res = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "search", tools: [{ type: "web_search_preview" }] })
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "unsupported_tool", param: "tools.0.type" })
    expect(((await getSession(env.gw, session.id)).body as { turn_count: number }).turn_count).toBe(0)
    expect(env.openai.chatRequests).toHaveLength(0)
  })

  it("invalid turn bodies answer 400: empty input, bad tool names, duplicate tools, unknown model", async () => {
    const session = await createSession(env.gw)
    const path = `/v1/sessions/${session.id}/turns`
    expect((await errorOf(await post(env.gw, path, { input: "" }))).status).toBe(400)
    expect((await errorOf(await post(env.gw, path, {}))).status).toBe(400)
    expect((await errorOf(await post(env.gw, path, { input: "x", tools: [{ type: "function", function: { name: "bad name" } }] }))).status).toBe(400)
    expect(await errorOf(await post(env.gw, path, { input: "x", tools: [weather, weather] })))
      .toMatchObject({ status: 400, code: "duplicate_tool" })
    const unknown = await errorOf(await post(env.gw, path, { input: "x", model: "no-such-model" }))
    expect(unknown.code).toBe("model_not_found")
    expect(((await getSession(env.gw, session.id)).body as { turn_count: number }).turn_count).toBe(0)
  })
})

describe("durability", () => {
  it("a client that disconnects mid-turn loses nothing: the turn runs to its end and every event is in the log", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["one ", "two ", "three ", "four ", "five"], chunkDelayMs: 60 })
    const response = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "count", model: MODEL })
    const partial = await readSse(response, { stopAfter: 2 })
    expect(names(partial.events)).toEqual(["turn.started", "response.output_text.delta"])
    await waitUntil(async () => {
      const log = await eventLog(env.gw, session.id)
      return log.data.some((e) => e.event_type === "turn.completed")
    }, 10_000, "the turn to complete")
    const log = await eventLog(env.gw, session.id)
    expect(log.data.filter((e) => e.event_type === "response.output_text.delta").map((e) => e.payload.delta).join(""))
      .toBe("one two three four five")
    expect(log.data.find((e) => e.event_type === "turn.completed")!.payload.output).toBe("one two three four five")
    expect(env.openai.abortCount).toBe(0)
  })

  it("GET /stream with Last-Event-ID replays after that sequence and follows the live turn: no gap, no duplicate", async () => {
    const session = await createSession(env.gw)
    const words = ["a ", "b ", "c ", "d ", "e ", "f ", "g"]
    env.openai.enqueue({ text: words, chunkDelayMs: 80 })
    const response = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "letters", model: MODEL })
    const before = (await readSse(response, { stopAfter: 3 })).events
    const lastId = before.at(-1)!.id!

    const resumed = await fetch(`${env.gw.baseUrl}/v1/sessions/${session.id}/stream`, {
      headers: { ...serviceKey(env.gw.project.apiKey), "last-event-id": lastId }
    })
    expect(resumed.status).toBe(200)
    expect(resumed.headers.get("content-type")).toContain("text/event-stream")
    const after = (await readSse(resumed)).events
    expect(after.at(-1)!.event).toBe("turn.completed")
    const all = [...before, ...after]
    const ids = all.map((e) => Number(e.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(all.filter((e) => e.event === "response.output_text.delta").map((e) => e.data.delta).join("")).toBe(words.join(""))
    // Everything streamed is exactly the log's streamed events, in order.
    const log = await eventLog(env.gw, session.id)
    const streamed = log.data.filter((e) => e.event_type !== "turn.input" && e.event_type !== "model.step" && e.event_type !== "session.created")
    expect(ids).toEqual(streamed.map((e) => e.sequence))

    // `?after=` does the same, and a finished turn replays and ends.
    const replay = await fetch(`${env.gw.baseUrl}/v1/sessions/${session.id}/stream?after=${lastId}`, {
      headers: serviceKey(env.gw.project.apiKey)
    })
    expect((await readSse(replay)).events.map((e) => e.id)).toEqual(after.map((e) => e.id))
  })

  it("a malformed Last-Event-ID answers 400 invalid_last_event_id", async () => {
    const session = await createSession(env.gw)
    const res = await fetch(`${env.gw.baseUrl}/v1/sessions/${session.id}/stream`, {
      headers: { ...serviceKey(env.gw.project.apiKey), "last-event-id": "abc" }
    })
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_last_event_id" })
  })

  it("deleting a session mid-turn stops the turn and its model call", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["x", "y", "z", "w"], chunkDelayMs: 300 })
    const response = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "long", model: MODEL })
    await readSse(response, { stopAfter: 2 })
    const del = await call(env.gw.baseUrl, "DELETE", `/v1/sessions/${session.id}`, { headers: serviceKey(env.gw.project.apiKey) })
    expect(del.status).toBe(200)
    await env.openai.waitForAbort(5000)
  })
})
