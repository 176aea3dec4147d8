/** The delivery log: GET /v1/webhook-deliveries filters and pages, attempts are recorded, replay (§4.2). */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startReceiver, type Receiver } from "../fakes/webhook-receiver.ts"
import { type Gateway, startGateway, type TestProject } from "../harness.ts"
import { shiftedClock } from "./clock.ts"
import { api, deliveryWhen, type DeliveryBody, eventually, publish } from "./helpers.ts"

const time = shiftedClock()
let gw: Gateway
let ok: Receiver
let broken: Receiver
let project: TestProject
let okEndpoint: string
let brokenEndpoint: string
const events: Record<string, string> = {}

beforeAll(async () => {
  ok = await startReceiver()
  broken = await startReceiver()
  broken.otherwise = () => ({ status: 500, body: "x".repeat(5000) })
  gw = await startGateway({ clock: time.clock, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", QUEUE_POLL_INTERVAL_MS: "50" } })
  project = await gw.createProject()
  const client = api(gw, project)
  okEndpoint = (await client.createEndpoint({ url: ok.url, events: ["session"] })).id
  brokenEndpoint = (await client.createEndpoint({ url: broken.url, events: ["session.created", "run"] })).id
  for (const type of ["session.created", "session.paused", "run.failed"] as const) {
    events[type] = (await publish(gw, { projectId: project.id, type, data: { note: type } })).id
  }
  // ok gets both session events; broken gets session.created and run.failed and keeps failing.
  await ok.waitFor(2)
  await broken.waitFor(2)
  await eventually(async () => {
    const { data } = await client.deliveries()
    return data.every((d) => d.attempt_count >= 1) && data.length === 4 ? true : undefined
  })
})
afterAll(async () => {
  await gw?.close()
  await ok?.close()
  await broken?.close()
})

const ids = (deliveries: ReadonlyArray<DeliveryBody>) => deliveries.map((d) => `${d.event.type}@${d.endpoint_id === okEndpoint ? "ok" : "broken"}`)

describe("filters", () => {
  it("lists every delivery of the project newest first", async () => {
    const { data, next_cursor } = await api(gw, project).deliveries()
    expect(next_cursor).toBeNull()
    expect(data).toHaveLength(4)
    expect(new Set(ids(data))).toEqual(new Set(["session.created@ok", "session.created@broken", "session.paused@ok", "run.failed@broken"]))
    const created = data.map((d) => Date.parse(d.created_at))
    expect([...created].sort((a, b) => b - a)).toEqual(created)
  })

  it("filters by endpoint", async () => {
    const { data } = await api(gw, project).deliveries(`?endpoint_id=${okEndpoint}`)
    expect(ids(data).sort()).toEqual(["session.created@ok", "session.paused@ok"])
  })

  it("filters by status", async () => {
    const client = api(gw, project)
    expect(ids((await client.deliveries("?status=succeeded")).data).sort()).toEqual(["session.created@ok", "session.paused@ok"])
    expect(ids((await client.deliveries("?status=pending")).data).sort()).toEqual(["run.failed@broken", "session.created@broken"])
    expect((await client.deliveries("?status=failed")).data).toEqual([])
    expect((await client.call("GET", "/v1/webhook-deliveries?status=lost")).status).toBe(400)
  })

  it("filters by event type, and combines filters", async () => {
    const client = api(gw, project)
    expect(ids((await client.deliveries("?event_type=session.created")).data).sort()).toEqual(["session.created@broken", "session.created@ok"])
    expect(ids((await client.deliveries(`?event_type=session.created&endpoint_id=${brokenEndpoint}&status=pending`)).data))
      .toEqual(["session.created@broken"])
  })

  it("pages with limit and cursor without repeating or skipping", async () => {
    const client = api(gw, project)
    const first = await client.deliveries("?limit=3")
    expect(first.data).toHaveLength(3)
    expect(first.next_cursor).not.toBeNull()
    const second = await client.deliveries(`?limit=3&cursor=${first.next_cursor}`)
    expect(second.data).toHaveLength(1)
    expect(second.next_cursor).toBeNull()
    const all = (await client.deliveries()).data.map((d) => d.id)
    expect([...first.data, ...second.data].map((d) => d.id)).toEqual(all)
  })

  it("never shows another project's deliveries", async () => {
    const stranger = api(gw, await gw.createProject())
    expect((await stranger.deliveries()).data).toEqual([])
    const one = (await api(gw, project).deliveries()).data[0]!
    expect((await stranger.call("GET", `/v1/webhook-deliveries/${one.id}`)).status).toBe(404)
    expect((await stranger.call("POST", `/v1/webhook-deliveries/${one.id}/replay`)).status).toBe(404)
  })
})

describe("attempts", () => {
  it("each attempt shows time, status code, latency, error and the answer capped at 1 KB", async () => {
    const { data } = await api(gw, project).deliveries(`?endpoint_id=${brokenEndpoint}&event_type=run.failed`)
    const delivery = data[0]!
    expect(delivery).toMatchObject({
      status: "pending",
      attempt_count: 1,
      last_error: "HTTP 500",
      event: { id: events["run.failed"], type: "run.failed", api_version: "1.1.0", data: { event_id: events["run.failed"], note: "run.failed" } }
    })
    const [attempt] = delivery.attempts
    expect(attempt).toMatchObject({ attempt: 1, status_code: 500, error: "HTTP 500" })
    expect(attempt!.response_snippet).toBe("x".repeat(1024))
    expect(Number.isInteger(attempt!.latency_ms)).toBe(true)
    expect(Date.parse(attempt!.attempted_at)).toBeGreaterThanOrEqual(Date.parse(delivery.created_at))
  })

  it("a later attempt is appended, numbered in order", async () => {
    const client = api(gw, project)
    const [delivery] = (await client.deliveries(`?endpoint_id=${brokenEndpoint}&event_type=session.created`)).data
    time.advanceTo(Date.parse(delivery!.next_attempt_at!))
    const later = await deliveryWhen(gw, project, delivery!.id, (d) => d.attempt_count === 2)
    expect(later.attempts.map((a) => a.attempt)).toEqual([1, 2])
    expect(Date.parse(later.attempts[1]!.attempted_at)).toBeGreaterThan(Date.parse(later.attempts[0]!.attempted_at))
  })
})

describe("replay", () => {
  it("answers 201 with a new pending delivery of the same event, including one still being retried", async () => {
    const client = api(gw, project)
    const [original] = (await client.deliveries(`?endpoint_id=${brokenEndpoint}&event_type=run.failed`)).data
    const res = await client.call("POST", `/v1/webhook-deliveries/${original!.id}/replay`)
    expect(res.status).toBe(201)
    const replay = res.body as DeliveryBody
    expect(replay).toMatchObject({ replay_of: original!.id, status: "pending", attempts: [], event: original!.event })
    expect(Date.parse(replay.retry_until) - Date.parse(replay.created_at)).toBe(24 * 3600 * 1000)
    const requests = await broken.waitFor(broken.received.length + 1)
    expect(JSON.parse(requests[requests.length - 1]!.body).data.event_id).toBe(events["run.failed"])
    const listed = await client.deliveries(`?event_type=run.failed`)
    expect(listed.data.map((d) => d.id)).toEqual([replay.id, original!.id])
  })

  it("an unknown delivery answers 404", async () => {
    const res = await api(gw, project).call("POST", "/v1/webhook-deliveries/whd_missing/replay")
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ error: { code: "not_found" }, status: "failed" })
  })

  it("a delivery of a disabled endpoint cannot be replayed until it is enabled again", async () => {
    const client = api(gw, project)
    const [original] = (await client.deliveries(`?endpoint_id=${okEndpoint}&status=succeeded`)).data
    await client.call("PATCH", `/v1/webhooks/${okEndpoint}`, { enabled: false })
    const refused = await client.call("POST", `/v1/webhook-deliveries/${original!.id}/replay`)
    expect(refused.status).toBe(409)
    await client.call("PATCH", `/v1/webhooks/${okEndpoint}`, { enabled: true })
    expect((await client.call("POST", `/v1/webhook-deliveries/${original!.id}/replay`)).status).toBe(201)
  })
})
