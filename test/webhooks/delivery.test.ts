/**
 * Delivery (§6.2) against real receivers on loopback, with the server's clock under test control: retry times
 * are checked against the recorded attempts, and made due by moving the clock, never by sleeping through them.
 */
import { verify as octokitVerify } from "@octokit/webhooks-methods"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Schema } from "effect"
import { verifyWebhookSignature } from "../../sdk/webhooks.ts"
import { Events } from "../../modules/events/Service.ts"
import { WebhookPayload } from "../../schemas/events.ts"
import { startReceiver, type Receiver } from "../fakes/webhook-receiver.ts"
import { type Gateway, startGateway, type TestProject } from "../harness.ts"
import { shiftedClock } from "./clock.ts"
import { api, deliveryWhen, type DeliveryBody, eventually, publish, settle } from "./helpers.ts"

const time = shiftedClock()
let gw: Gateway
const receivers: Array<Receiver> = []

beforeAll(async () => {
  gw = await startGateway({
    clock: time.clock,
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", QUEUE_POLL_INTERVAL_MS: "50", WEBHOOK_TIMEOUT_MS: "1000" }
  })
})
afterAll(async () => {
  if (process.env.DEBUG_LOGS) for (const line of gw.logs) if (!line.includes("\"level\":\"info\"")) console.log(line)
  await gw?.close()
})
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
})

/** A fresh project with one endpoint on a fresh receiver. */
const setup = async (events: ReadonlyArray<string> = ["*"]) => {
  const receiver = await startReceiver()
  receivers.push(receiver)
  const project = await gw.createProject()
  const endpoint = await api(gw, project).createEndpoint({ url: receiver.url, events })
  return { receiver, project, endpoint, client: api(gw, project) }
}

const deliveryOf = async (project: TestProject, eventId: string): Promise<DeliveryBody> =>
  eventually(async () => (await api(gw, project).deliveries()).data.find((d) => d.event.id === eventId), 5000, "delivery row")

/** Retry delay chosen after an attempt: from the end of the attempt (start + latency) to the next attempt. */
const delayAfter = (delivery: DeliveryBody) => {
  const last = delivery.attempts[delivery.attempts.length - 1]!
  return Date.parse(delivery.next_attempt_at!) - Date.parse(last.attempted_at) - last.latency_ms!
}

describe("a 2xx answer", () => {
  it("delivers the raw signed JSON body with the contract headers, verifiable by octokit and by our helper", async () => {
    const { receiver, project, endpoint } = await setup()
    const event = await publish(gw, {
      projectId: project.id,
      type: "session.created",
      data: { session_id: "sess_1", status: "active", metadata: { plan: "pro" } }
    })
    const [request] = await receiver.waitFor(1)
    const signature = request!.headers["x-webhook-signature"]
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(await octokitVerify(endpoint.secret, request!.body, String(signature))).toBe(true)
    expect(verifyWebhookSignature(endpoint.secret, request!.body, signature)).toBe(true)
    expect(verifyWebhookSignature("whsec_wrong", request!.body, signature)).toBe(false)
    expect(request!.method).toBe("POST")
    expect(request!.headers["content-type"]).toBe("application/json")
    expect(request!.headers["x-webhook-event"]).toBe("session.created")
    const body = JSON.parse(request!.body)
    expect(() => Schema.decodeUnknownSync(WebhookPayload)(body)).not.toThrow()
    expect(body).toEqual({
      type: "session.created",
      timestamp: request!.headers["x-webhook-timestamp"],
      api_version: "1.1.0",
      occurred_at: event.occurredAt.toISOString(),
      data: { event_id: event.id, session_id: "sess_1", status: "active", metadata: { plan: "pro" } }
    })
    expect(event.id).toMatch(/^evt_/)
    expect(Math.abs(Date.parse(body.timestamp) - time.now())).toBeLessThan(5000)
    const delivery = await deliveryWhen(gw, project, (await deliveryOf(project, event.id)).id, (d) => d.status === "succeeded")
    expect(delivery.attempts).toHaveLength(1)
    expect(delivery.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null, response_snippet: "ok" })
    expect(delivery.next_attempt_at).toBeNull()
  })

  it("any 2xx is success, and the answer body is kept in the log", async () => {
    const { receiver, project } = await setup()
    receiver.script({ status: 204 })
    const event = await publish(gw, { projectId: project.id, type: "run.completed", data: { run_id: "run_1" } })
    const delivery = await deliveryWhen(gw, project, (await deliveryOf(project, event.id)).id, (d) => d.status !== "pending")
    expect(delivery.status).toBe("succeeded")
    expect(delivery.attempts[0]!.status_code).toBe(204)
  })
})

describe("final failures", () => {
  it("a 410 answer is not retried", async () => {
    const { receiver, project, endpoint, client } = await setup()
    receiver.script({ status: 410, body: "gone" })
    const event = await publish(gw, { projectId: project.id, type: "session.deleted", data: { session_id: "s" } })
    const delivery = await deliveryWhen(gw, project, (await deliveryOf(project, event.id)).id, (d) => d.status !== "pending")
    expect(delivery).toMatchObject({ status: "failed", attempt_count: 1, last_error: "HTTP 410", next_attempt_at: null })
    expect(delivery.attempts[0]).toMatchObject({ status_code: 410, error: "HTTP 410", response_snippet: "gone" })
    time.advance("2 hours")
    await settle()
    expect(receiver.received).toHaveLength(1)
    // A final 4xx is the receiver's answer, not an outage: the endpoint is not marked failing.
    expect((await client.endpoint(endpoint.id)).status).toBe("active")
  })

  it("a redirect is not followed and not retried", async () => {
    const { receiver, project } = await setup()
    const elsewhere = await startReceiver()
    receivers.push(elsewhere)
    receiver.script({ status: 307, headers: { location: elsewhere.url } })
    const event = await publish(gw, { projectId: project.id, type: "agent.updated", data: { agent_id: "a" } })
    const delivery = await deliveryWhen(gw, project, (await deliveryOf(project, event.id)).id, (d) => d.status !== "pending")
    expect(delivery.status).toBe("failed")
    expect(delivery.last_error).toBe("HTTP 307: redirects are not followed")
    time.advance("1 hour")
    await settle()
    expect(elsewhere.received).toHaveLength(0)
    expect(receiver.received).toHaveLength(1)
  })
})

describe("retries", () => {
  it("a 500 is retried 2 s later, and the retry that answers 200 completes the delivery", async () => {
    const { receiver, project } = await setup()
    receiver.script({ status: 500, body: "boom" })
    const event = await publish(gw, { projectId: project.id, type: "session.paused", data: { session_id: "s" } })
    const id = (await deliveryOf(project, event.id)).id
    const first = await deliveryWhen(gw, project, id, (d) => d.attempt_count === 1)
    expect(first).toMatchObject({ status: "pending", last_error: "HTTP 500" })
    expect(first.attempts[0]).toMatchObject({ status_code: 500, error: "HTTP 500", response_snippet: "boom" })
    expect(delayAfter(first)).toBeGreaterThanOrEqual(2000)
    expect(delayAfter(first)).toBeLessThan(2100)
    await settle()
    expect(receiver.received).toHaveLength(1)
    time.advanceTo(Date.parse(first.next_attempt_at!))
    const done = await deliveryWhen(gw, project, id, (d) => d.status === "succeeded")
    expect(done.attempts.map((a) => a.status_code)).toEqual([500, 200])
    expect(Date.parse(done.attempts[1]!.attempted_at)).toBeGreaterThanOrEqual(Date.parse(first.next_attempt_at!))
    const [one, two] = receiver.payloads()
    expect(two!.data.event_id).toBe(one!.data.event_id)
  })

  it("backoff doubles: 2 s, 4 s, 8 s, 16 s, 32 s after successive failures", async () => {
    const { receiver, project } = await setup()
    receiver.otherwise = () => ({ status: 502 })
    const event = await publish(gw, { projectId: project.id, type: "usage.recorded", data: { tokens: 12 } })
    const id = (await deliveryOf(project, event.id)).id
    const delays: Array<number> = []
    for (let attempt = 1; attempt <= 5; attempt++) {
      const state = await deliveryWhen(gw, project, id, (d) => d.attempt_count === attempt)
      delays.push(Math.round(delayAfter(state) / 100) * 100)
      time.advanceTo(Date.parse(state.next_attempt_at!))
    }
    expect(delays).toEqual([2000, 4000, 8000, 16000, 32000])
  })

  it("a 429 waits for its Retry-After instead of the backoff", async () => {
    const { receiver, project } = await setup()
    receiver.script({ status: 429, headers: { "retry-after": "120" } })
    const event = await publish(gw, { projectId: project.id, type: "action.created", data: { action_id: "act" } })
    const id = (await deliveryOf(project, event.id)).id
    const first = await deliveryWhen(gw, project, id, (d) => d.attempt_count === 1)
    expect(first.attempts[0]!.status_code).toBe(429)
    expect(Math.round(delayAfter(first) / 100) * 100).toBe(120_000)
    time.advance("100 seconds")
    await settle()
    expect(receiver.received).toHaveLength(1)
    time.advanceTo(Date.parse(first.next_attempt_at!))
    await deliveryWhen(gw, project, id, (d) => d.status === "succeeded")
    expect(receiver.received).toHaveLength(2)
  })

  it("a 503 honours a Retry-After given as an HTTP date", async () => {
    const { receiver, project } = await setup()
    const at = new Date(Math.ceil((time.now() + 60_000) / 1000) * 1000)
    receiver.script({ status: 503, headers: { "retry-after": at.toUTCString() } })
    const event = await publish(gw, { projectId: project.id, type: "tenant.updated", data: { tenant_id: "t" } })
    const id = (await deliveryOf(project, event.id)).id
    const first = await deliveryWhen(gw, project, id, (d) => d.attempt_count === 1)
    expect(Date.parse(first.next_attempt_at!)).toBe(at.getTime())
  })

  it("a receiver that never answers times out, and the attempt is retried", async () => {
    const { receiver, project } = await setup()
    receiver.script({ hang: true })
    const event = await publish(gw, { projectId: project.id, type: "connection.expired", data: { connection_id: "c" } })
    const id = (await deliveryOf(project, event.id)).id
    const first = await deliveryWhen(gw, project, id, (d) => d.attempt_count === 1)
    expect(first.attempts[0]).toMatchObject({ status_code: null, error: "timed out after 1000 ms" })
    expect(first.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(1000)
    expect(first.status).toBe("pending")
    time.advanceTo(Date.parse(first.next_attempt_at!))
    const done = await deliveryWhen(gw, project, id, (d) => d.status === "succeeded")
    expect(done.attempt_count).toBe(2)
  })

  it("a refused connection is a network error and is retried", async () => {
    const { receiver, project, endpoint, client } = await setup()
    await receiver.close()
    const delivery = await client.ping(endpoint.id)
    const first = await deliveryWhen(gw, project, delivery.id, (d) => d.attempt_count === 1)
    expect(first.status).toBe("pending")
    expect(first.attempts[0]).toMatchObject({ status_code: null, error: "network error: ECONNREFUSED" })
  })

  it("a pending delivery of an endpoint that gets disabled ends as failed without another attempt", async () => {
    const { receiver, project, endpoint, client } = await setup()
    receiver.script({ status: 500 })
    const event = await publish(gw, { projectId: project.id, type: "agent.created", data: { agent_id: "a" } })
    const id = (await deliveryOf(project, event.id)).id
    const first = await deliveryWhen(gw, project, id, (d) => d.attempt_count === 1)
    expect((await client.call("PATCH", `/v1/webhooks/${endpoint.id}`, { enabled: false })).status).toBe(200)
    time.advanceTo(Date.parse(first.next_attempt_at!))
    const done = await deliveryWhen(gw, project, id, (d) => d.status !== "pending")
    expect(done).toMatchObject({ status: "failed", last_error: "endpoint disabled", attempt_count: 1 })
    expect(receiver.received).toHaveLength(1)
  })

  it("an endpoint failing for the whole 24-hour budget is marked failing with the reason, and a success clears it", async () => {
    const { receiver, project, endpoint, client } = await setup()
    receiver.otherwise = () => ({ status: 500 })
    const event = await publish(gw, { projectId: project.id, type: "installation.created", data: { installation_id: "i" } })
    const id = (await deliveryOf(project, event.id)).id
    let state = await deliveryWhen(gw, project, id, (d) => d.attempt_count === 1)
    const deadline = Date.parse(state.retry_until)
    expect(deadline - Date.parse(state.created_at)).toBe(24 * 3600 * 1000)
    while (state.status === "pending") {
      const count = state.attempt_count
      time.advanceTo(Date.parse(state.next_attempt_at!))
      state = await deliveryWhen(gw, project, id, (d) => d.attempt_count > count || d.status !== "pending")
    }
    expect(state.status).toBe("failed")
    // 2 + 4 + ... + 32768 s is about 18.2 h; the 17th attempt is moved up to the end of the budget.
    expect(state.attempt_count).toBe(17)
    expect(Date.parse(state.attempts[16]!.attempted_at)).toBeGreaterThanOrEqual(deadline)
    expect(receiver.received).toHaveLength(17)
    const failing = await client.endpoint(endpoint.id)
    expect(failing).toMatchObject({ status: "failing", enabled: true, last_error: "HTTP 500" })
    expect(failing.failure_reason).toContain("24 hours")
    expect(Date.parse(failing.failed_at!)).toBeGreaterThanOrEqual(deadline)

    receiver.otherwise = () => ({ status: 200 })
    const ping = await client.ping(endpoint.id)
    await deliveryWhen(gw, project, ping.id, (d) => d.status === "succeeded")
    expect(await client.endpoint(endpoint.id)).toMatchObject({
      status: "active",
      failure_reason: null,
      failed_at: null,
      last_error: null
    })
  })
})

describe("outbox", () => {
  it("an event published in a transaction that rolls back is never delivered", async () => {
    const { receiver, project, client } = await setup()
    const exit = await gw.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const events = yield* Events
      return yield* sql.withTransaction(Effect.gen(function*() {
        yield* events.publish({ projectId: project.id, type: "tenant.created", data: { tenant_id: "ten_rolled_back" } })
        return yield* Effect.fail("the change failed")
      })).pipe(Effect.exit)
    }))
    expect(Exit.isFailure(exit)).toBe(true)
    const committed = await publish(gw, { projectId: project.id, type: "tenant.created", data: { tenant_id: "ten_ok" } })
    await receiver.waitFor(1)
    await settle()
    expect(receiver.payloads().map((p) => p.data.event_id)).toEqual([committed.id])
    expect((await client.deliveries("?event_type=tenant.created")).data.map((d) => d.event.id)).toEqual([committed.id])
    const stored = await gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM domain_events WHERE project_id = ${project.id}`))
    expect(stored[0]!.n).toBe(1)
  })

  it("publishing outside a transaction is refused", async () => {
    const { project } = await setup()
    const exit = await gw.run(
      Effect.flatMap(Events, (events) => events.publish({ projectId: project.id, type: "tenant.created", data: {} })).pipe(
        Effect.exit
      )
    )
    expect(Exit.isFailure(exit) && Exit.isFailure(exit) ? String(exit.cause) : "").toContain("inside sql.withTransaction")
  })

  it("an event reaches the endpoints subscribed to its family or type, and never a disabled one", async () => {
    const receiver = await startReceiver("/")
    receivers.push(receiver)
    const project = await gw.createProject()
    const client = api(gw, project)
    const at = (path: string) => `http://127.0.0.1:${receiver.port}/${path}`
    await client.createEndpoint({ url: at("sessions"), events: ["session"] })
    await client.createEndpoint({ url: at("created"), events: ["session.created"] })
    await client.createEndpoint({ url: at("runs"), events: ["run"] })
    await client.createEndpoint({ url: at("all") })
    await client.createEndpoint({ url: at("off"), events: ["*"], enabled: false })
    const created = await publish(gw, { projectId: project.id, type: "session.created", data: {} })
    const paused = await publish(gw, { projectId: project.id, type: "session.paused", data: {} })
    const subagent = await publish(gw, { projectId: project.id, type: "subagent.completed", data: {} })
    const usage = await publish(gw, { projectId: project.id, type: "usage.recorded", data: {} })
    await receiver.waitFor(8)
    await settle()
    const got = (eventId: string) =>
      receiver.received.filter((r) => JSON.parse(r.body).data.event_id === eventId).map((r) => r.path).sort()
    expect(got(created.id)).toEqual(["/all", "/created", "/sessions"])
    expect(got(paused.id)).toEqual(["/all", "/sessions"])
    expect(got(subagent.id)).toEqual(["/all", "/runs"])
    expect(got(usage.id)).toEqual(["/all"])
    expect(receiver.received).toHaveLength(8)
    expect(created.deliveries).toBe(3)
  })
})

describe("replay", () => {
  it("a replay is a new delivery of the same payload with the same event_id", async () => {
    const { receiver, project, endpoint, client } = await setup()
    const event = await publish(gw, { projectId: project.id, type: "knowledge_source.ready", data: { source_id: "ks_1" } })
    const original = await deliveryWhen(gw, project, (await deliveryOf(project, event.id)).id, (d) => d.status === "succeeded")
    const res = await client.call("POST", `/v1/webhook-deliveries/${original.id}/replay`)
    expect(res.status).toBe(201)
    const replay = res.body as DeliveryBody
    expect(replay.id).not.toBe(original.id)
    expect(replay).toMatchObject({ replay_of: original.id, endpoint_id: endpoint.id, status: "pending", attempt_count: 0 })
    expect(replay.event).toEqual(original.event)
    await receiver.waitFor(2)
    await deliveryWhen(gw, project, replay.id, (d) => d.status === "succeeded")
    const [first, second] = receiver.payloads()
    expect(second!.data).toEqual(first!.data)
    expect(second!.data.event_id).toBe(event.id)
    expect(second!.type).toBe(first!.type)
    for (const request of receiver.received) {
      expect(verifyWebhookSignature(endpoint.secret, request.body, request.headers["x-webhook-signature"])).toBe(true)
    }
  })
})
