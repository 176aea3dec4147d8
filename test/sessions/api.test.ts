/**
 * Session resources through the real server: create, get, list with pagination, events, delete, auth and the
 * platform error envelope. Turns are in turns.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, call, serviceKey } from "../http.ts"
import { createSession, type Env, eventLog, getSession, post, startSessionsEnv, turn } from "./helpers.ts"

let env: Env
beforeAll(async () => {
  env = await startSessionsEnv()
})
afterAll(() => env?.close())

const get = (path: string, key = env.gw.project.apiKey) => call(env.gw.baseUrl, "GET", path, { headers: serviceKey(key) })

const expectPlatformError = (res: { status: number; body: unknown }, status: number, code: string) => {
  expect(res.status).toBe(status)
  const body = res.body as { error: { type: string; code: string; message: string; request_id: string | null }; status: string }
  expect(body.status).toBe("failed")
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe("string")
  expect(body.error.request_id).toMatch(/^req_/)
}

describe("create and get", () => {
  it("a new session is active with turn_count 0, its agent_id and metadata, and total_cost 0", async () => {
    const res = await call(env.gw.baseUrl, "POST", "/v1/sessions", {
      headers: serviceKey(env.gw.project.apiKey),
      json: { agent_id: "agent_1", metadata: { customer: "c-42", nested: { a: [1, 2] } } }
    })
    expect(res.status).toBe(201)
    const session = res.body as Record<string, unknown>
    expect(Object.keys(session).sort()).toEqual(
      ["agent_id", "created_at", "id", "metadata", "status", "total_cost", "turn_count", "updated_at"]
    )
    expect(session).toMatchObject({
      status: "active",
      turn_count: 0,
      agent_id: "agent_1",
      metadata: { customer: "c-42", nested: { a: [1, 2] } },
      total_cost: 0
    })
    expect(new Date(String(session.created_at)).toISOString()).toBe(session.created_at)
    const fetched = await getSession(env.gw, String(session.id))
    expect(fetched.status).toBe(200)
    expect(fetched.body).toEqual(session)
  })

  it("agent_id and metadata are optional: null and {}", async () => {
    const session = await createSession(env.gw)
    expect(session).toMatchObject({ agent_id: null, metadata: {}, status: "active", turn_count: 0 })
  })

  it("the log of a new session holds one session.created event at sequence 1", async () => {
    const session = await createSession(env.gw, { metadata: { k: "v" } })
    const log = await eventLog(env.gw, session.id)
    expect(log.data).toHaveLength(1)
    expect(log.data[0]).toMatchObject({
      session_id: session.id,
      turn_number: 0,
      sequence: 1,
      event_type: "session.created",
      payload: { agent_id: null, metadata: { k: "v" } }
    })
  })

  it("an unknown session answers 404 session_not_found in the platform envelope", async () => {
    expectPlatformError(await get("/v1/sessions/sess_missing"), 404, "session_not_found")
    expectPlatformError(await get("/v1/sessions/sess_missing/events"), 404, "session_not_found")
    expectPlatformError(await get("/v1/sessions/sess_missing/stream"), 404, "session_not_found")
  })

  it("another project's session is not found", async () => {
    const other = await env.gw.createProject()
    const session = await createSession(env.gw, {}, other.apiKey)
    expectPlatformError(await get(`/v1/sessions/${session.id}`), 404, "session_not_found")
    expect((await get(`/v1/sessions/${session.id}`, other.apiKey)).status).toBe(200)
  })

  it("sessions need the SERVICE_API_KEY header (or a client token): 401 otherwise", async () => {
    const missing = await call(env.gw.baseUrl, "GET", "/v1/sessions")
    expectPlatformError(missing, 401, "unauthorized")
    const wrong = await get("/v1/sessions", "sak_wrong")
    expect(wrong.status).toBe(401)
  })

  it("a client token (ect_) sees only the sessions it created; the API key sees them all", async () => {
    const project = await env.gw.createProject()
    const token = async (user: string) => {
      const res = await call(env.gw.baseUrl, "POST", "/v1/client-tokens", {
        headers: bearer(project.secretKey),
        json: { external_user_id: user }
      })
      return (res.body as { token: string }).token
    }
    const alice = await token("alice")
    const bob = await token("bob")
    const created = await call(env.gw.baseUrl, "POST", "/v1/sessions", { headers: bearer(alice), json: {} })
    expect(created.status).toBe(201)
    const id = (created.body as { id: string }).id
    const asBob = await call(env.gw.baseUrl, "GET", `/v1/sessions/${id}`, { headers: bearer(bob) })
    expectPlatformError(asBob, 404, "session_not_found")
    const asAlice = await call(env.gw.baseUrl, "GET", `/v1/sessions/${id}`, { headers: bearer(alice) })
    expect(asAlice.status).toBe(200)
    const bobList = await call(env.gw.baseUrl, "GET", "/v1/sessions", { headers: bearer(bob) })
    expect((bobList.body as { data: unknown[] }).data).toHaveLength(0)
    const all = await get("/v1/sessions", project.apiKey)
    expect((all.body as { data: Array<{ id: string }> }).data.map((s) => s.id)).toEqual([id])
  })
})

describe("list pagination", () => {
  let key: string
  let ids: Array<string>
  beforeAll(async () => {
    const project = await env.gw.createProject()
    key = project.apiKey
    ids = []
    for (let i = 0; i < 5; i++) ids.push((await createSession(env.gw, { metadata: { i } }, key)).id)
  })

  const list = (query: string) => get(`/v1/sessions${query}`, key)

  it("defaults to page 1 and limit 20, newest first", async () => {
    const res = await list("")
    expect(res.status).toBe(200)
    const body = res.body as { data: Array<{ id: string; total_cost: number }>; pagination: unknown }
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 5, total_pages: 1 })
    expect(body.data.map((s) => s.id)).toEqual([...ids].reverse())
    expect(body.data.every((s) => s.total_cost === 0)).toBe(true)
  })

  it("pages by limit: total_pages rounds up, the last page holds the rest, a page past the end is empty", async () => {
    const pages = await Promise.all([1, 2, 3, 4].map((page) => list(`?limit=2&page=${page}`)))
    const bodies = pages.map((res) => res.body as { data: Array<{ id: string }>; pagination: unknown })
    expect(bodies.map((b) => b.data.length)).toEqual([2, 2, 1, 0])
    expect(bodies[0]!.pagination).toEqual({ page: 1, limit: 2, total: 5, total_pages: 3 })
    expect(bodies[3]!.pagination).toEqual({ page: 4, limit: 2, total: 5, total_pages: 3 })
    expect(bodies.flatMap((b) => b.data.map((s) => s.id))).toEqual([...ids].reverse())
  })

  it("limit is 1 to 100 and page at least 1: the edges pass, past them 400 invalid_request", async () => {
    expect((await list("?limit=1")).status).toBe(200)
    expect((await list("?limit=100")).status).toBe(200)
    expectPlatformError(await list("?limit=0"), 400, "invalid_request")
    expectPlatformError(await list("?limit=101"), 400, "invalid_request")
    expectPlatformError(await list("?page=0"), 400, "invalid_request")
    expectPlatformError(await list("?page=1.5"), 400, "invalid_request")
    expectPlatformError(await list("?limit=abc"), 400, "invalid_request")
    expectPlatformError(await list("?status=running"), 400, "invalid_request")
  })

  it("filters by status", async () => {
    const active = (await list("?status=active")).body as { pagination: { total: number } }
    expect(active.pagination.total).toBe(5)
    const completed = (await list("?status=completed")).body as { data: unknown[]; pagination: { total: number; total_pages: number } }
    expect(completed.data).toEqual([])
    expect(completed.pagination).toMatchObject({ total: 0, total_pages: 0 })
  })
})

describe("events pagination", () => {
  it("defaults to limit 100, accepts up to 1000, filters by turn_number and orders by sequence", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ text: ["a", "b", "c"] }, { text: ["d", "e"] })
    await turn(env.gw, session.id, { input: "one" })
    await turn(env.gw, session.id, { input: "two" })
    const all = await eventLog(env.gw, session.id, "")
    expect(all.pagination).toMatchObject({ page: 1, limit: 100 })
    expect(all.data.map((e) => e.sequence)).toEqual(all.data.map((_, i) => i + 1))
    expect(all.pagination.total).toBe(all.data.length)

    const second = await eventLog(env.gw, session.id, "turn_number=2")
    expect(second.data.length).toBeGreaterThan(0)
    expect(second.data.every((e) => e.turn_number === 2)).toBe(true)
    expect(second.data.map((e) => e.event_type)).toEqual([
      "turn.input",
      "turn.started",
      "response.output_text.delta",
      "response.output_text.delta",
      "model.step",
      "turn.completed"
    ])

    const paged = await eventLog(env.gw, session.id, "limit=3&page=2")
    expect(paged.data.map((e) => e.sequence)).toEqual([4, 5, 6])
    expect(paged.pagination).toEqual({ page: 2, limit: 3, total: all.data.length, total_pages: Math.ceil(all.data.length / 3) })

    expect((await get(`/v1/sessions/${session.id}/events?limit=1000`)).status).toBe(200)
    expectPlatformError(await get(`/v1/sessions/${session.id}/events?limit=1001`), 400, "invalid_request")
    expectPlatformError(await get(`/v1/sessions/${session.id}/events?limit=0`), 400, "invalid_request")
    expectPlatformError(await get(`/v1/sessions/${session.id}/events?page=0`), 400, "invalid_request")
    expectPlatformError(await get(`/v1/sessions/${session.id}/events?turn_number=-1`), 400, "invalid_request")
  })
})

describe("delete", () => {
  it("answers {id, deleted: true}; afterwards every operation on it answers 404 and lists leave it out", async () => {
    const project = await env.gw.createProject()
    const session = await createSession(env.gw, {}, project.apiKey)
    const del = await call(env.gw.baseUrl, "DELETE", `/v1/sessions/${session.id}`, { headers: serviceKey(project.apiKey) })
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ id: session.id, deleted: true })

    expectPlatformError(await get(`/v1/sessions/${session.id}`, project.apiKey), 404, "session_not_found")
    expectPlatformError(await get(`/v1/sessions/${session.id}/events`, project.apiKey), 404, "session_not_found")
    const again = await call(env.gw.baseUrl, "DELETE", `/v1/sessions/${session.id}`, { headers: serviceKey(project.apiKey) })
    expectPlatformError(again, 404, "session_not_found")
    const turnRes = await post(env.gw, `/v1/sessions/${session.id}/turns`, { input: "hi" }, project.apiKey)
    expect(turnRes.status).toBe(404)
    expect(((await turnRes.json()) as { error: { code: string } }).error.code).toBe("session_not_found")
    const approveRes = await post(env.gw, `/v1/sessions/${session.id}/approve`, { action_id: "act_x", tool_results: [] }, project.apiKey)
    expect(approveRes.status).toBe(404)
    const rejectRes = await post(env.gw, `/v1/sessions/${session.id}/reject`, { action_id: "act_x" }, project.apiKey)
    expect(rejectRes.status).toBe(404)
    const listed = await get("/v1/sessions", project.apiKey)
    expect((listed.body as { pagination: { total: number } }).pagination.total).toBe(0)
  })
})
