/** Webhook endpoints under /v1/webhooks (§4.2, §5): secret key only, secret shown once, CRUD, rotation. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhookSignature } from "../../sdk/webhooks.ts"
import { startReceiver, type Receiver } from "../fakes/webhook-receiver.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call, serviceKey } from "../http.ts"
import { api, deliveryWhen, type EndpointBody } from "./helpers.ts"

let gw: Gateway
let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
  gw = await startGateway({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", QUEUE_POLL_INTERVAL_MS: "50" } })
})
afterAll(async () => {
  await gw?.close()
  await receiver?.close()
})

const platformError = (code: string) => ({
  error: { type: expect.any(String), code, message: expect.any(String), request_id: expect.any(String), param: expect.toSatisfy((v: unknown) => v === null || typeof v === "string") },
  status: "failed"
})

describe("authentication", () => {
  it("accepts only the secret key: API key, SERVICE_API_KEY, client token and no credential answer 401", async () => {
    const token = await call(gw.baseUrl, "POST", "/v1/client-tokens", { headers: bearer(gw.project.secretKey), json: {} })
    const clientToken = (token.body as { token: string }).token
    const attempts: Array<Record<string, string>> = [
      {},
      bearer(gw.project.apiKey),
      serviceKey(gw.project.apiKey),
      bearer(clientToken),
      bearer("csk_not_a_real_key")
    ]
    for (const headers of attempts) {
      for (const [method, path] of [
        ["POST", "/v1/webhooks"],
        ["GET", "/v1/webhooks"],
        ["GET", "/v1/webhook-deliveries"],
        ["POST", "/v1/webhook-deliveries/whd_x/replay"]
      ] as const) {
        const res = await call(gw.baseUrl, method, path, method === "GET" ? { headers } : { headers, json: { url: receiver.url } })
        expect(res.status, `${method} ${path} with ${Object.keys(headers).join(",")}`).toBe(401)
        expect(res.body).toMatchObject({ error: { code: "unauthorized" }, status: "failed" })
      }
    }
  })
})

describe("create", () => {
  it("answers 201 with the whsec_ secret once; get and list never show it", async () => {
    const client = api(gw, await gw.createProject())
    const created = await client.createEndpoint({ url: receiver.url, events: ["session", "run"], description: "prod" })
    expect(created).toMatchObject({
      object: "webhook_endpoint",
      url: receiver.url,
      events: ["session", "run"],
      description: "prod",
      enabled: true,
      status: "active",
      failure_reason: null,
      failed_at: null,
      last_error: null
    })
    expect(created.id).toMatch(/^wh_/)
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    const fetched = await client.call("GET", `/v1/webhooks/${created.id}`)
    expect(fetched.status).toBe(200)
    expect(fetched.body).not.toHaveProperty("secret")
    expect(fetched.text).not.toContain(created.secret)
    const listed = await client.call("GET", "/v1/webhooks")
    expect(listed.text).not.toContain(created.secret)
    expect((listed.body as { data: Array<EndpointBody> }).data.map((e) => e.id)).toEqual([created.id])
  })

  it("stores the secret encrypted, not in clear", async () => {
    const created = await api(gw).createEndpoint({ url: receiver.url })
    const rows = await gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly secret_ciphertext: string }>`SELECT secret_ciphertext FROM webhook_endpoints WHERE id = ${created.id}`))
    expect(rows[0]!.secret_ciphertext).toMatch(/^v1\./)
    expect(rows[0]!.secret_ciphertext).not.toContain(created.secret.slice(6))
  })

  it("subscribes to everything by default, and * absorbs other filters", async () => {
    const client = api(gw, await gw.createProject())
    expect((await client.createEndpoint({ url: receiver.url })).events).toEqual(["*"])
    expect((await client.createEndpoint({ url: receiver.url, events: ["session", "*"] })).events).toEqual(["*"])
    expect((await client.createEndpoint({ url: receiver.url, events: ["session.created", "session.created"] })).events)
      .toEqual(["session.created"])
  })

  it("accepts every family of §6.2 and rejects unknown families and types", async () => {
    const client = api(gw, await gw.createProject())
    const families = [
      "provider_connection",
      "provider_model_sync",
      "tenant",
      "agent",
      "installation",
      "knowledge_source",
      "connection",
      "session",
      "run",
      "subagent",
      "action",
      "usage"
    ]
    expect((await client.createEndpoint({ url: receiver.url, events: families })).events).toEqual(families)
    for (const events of [["sessions"], ["session.exploded"], [], ["webhook.ping"]]) {
      const res = await client.call("POST", "/v1/webhooks", { url: receiver.url, events })
      expect(res.status, JSON.stringify(events)).toBe(400)
      expect(res.body).toMatchObject(platformError("invalid_request"))
      expect((res.body as { error: { param: string } }).error.param).toMatch(/^events/)
    }
  })

  it("rejects a malformed URL, another scheme and embedded credentials", async () => {
    for (const url of ["not a url", "ftp://example.com/hook", "http://user:pass@127.0.0.1/hook", ""]) {
      const res = await api(gw).call("POST", "/v1/webhooks", { url })
      expect(res.status, url).toBe(400)
      expect((res.body as { error: { param: string } }).error.param).toBe("url")
    }
  })

  it("limits a description to 500 characters", async () => {
    expect((await api(gw).call("POST", "/v1/webhooks", { url: receiver.url, description: "d".repeat(500) })).status).toBe(201)
    expect((await api(gw).call("POST", "/v1/webhooks", { url: receiver.url, description: "d".repeat(501) })).status).toBe(400)
  })

  it("allows at most 50 endpoints per project", async () => {
    const client = api(gw, await gw.createProject())
    for (let i = 0; i < 50; i++) await client.createEndpoint({ url: receiver.url })
    const res = await client.call("POST", "/v1/webhooks", { url: receiver.url })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject(platformError("too_many_webhooks"))
  })
})

describe("list", () => {
  it("pages newest first with limit and cursor until next_cursor is null", async () => {
    const client = api(gw, await gw.createProject())
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) ids.push((await client.createEndpoint({ url: receiver.url, description: `n${i}` })).id)
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await client.call("GET", `/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ""}`)
      expect(res.status).toBe(200)
      const body = res.body as { data: Array<EndpointBody>; next_cursor: string | null }
      expect(body.data.length).toBeLessThanOrEqual(2)
      seen.push(...body.data.map((e) => e.id))
      cursor = body.next_cursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual([...ids].reverse())
  })

  it("rejects a malformed cursor and a limit out of 1..100", async () => {
    expect((await api(gw).call("GET", "/v1/webhooks?cursor=bm9wZQ")).body).toMatchObject(platformError("invalid_cursor"))
    expect((await api(gw).call("GET", "/v1/webhooks?limit=0")).status).toBe(400)
    expect((await api(gw).call("GET", "/v1/webhooks?limit=101")).status).toBe(400)
    expect((await api(gw).call("GET", "/v1/webhooks?limit=100")).status).toBe(200)
  })
})

describe("update and delete", () => {
  it("PATCH changes url, events, enabled and description, and null clears the description", async () => {
    const client = api(gw, await gw.createProject())
    const other = await startReceiver("/other")
    try {
      const created = await client.createEndpoint({ url: receiver.url, description: "first" })
      const res = await client.call("PATCH", `/v1/webhooks/${created.id}`, {
        url: other.url,
        events: ["usage"],
        enabled: false,
        description: null
      })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ id: created.id, url: other.url, events: ["usage"], enabled: false, status: "disabled", description: null })
      expect(Date.parse((res.body as EndpointBody).updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at))
      const again = await client.call("PATCH", `/v1/webhooks/${created.id}`, { enabled: true })
      expect(again.body).toMatchObject({ url: other.url, events: ["usage"], enabled: true, status: "active" })
      expect((await client.call("PATCH", `/v1/webhooks/${created.id}`, { url: "gopher://x" })).status).toBe(400)
    } finally {
      await other.close()
    }
  })

  it("DELETE answers the deleted response; the endpoint and its deliveries are gone", async () => {
    const project = await gw.createProject()
    const client = api(gw, project)
    const created = await client.createEndpoint({ url: receiver.url })
    const ping = await client.ping(created.id)
    await deliveryWhen(gw, project, ping.id, (d) => d.status === "succeeded")
    const res = await client.call("DELETE", `/v1/webhooks/${created.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: created.id, deleted: true, status: "deleted" })
    expect((await client.call("GET", `/v1/webhooks/${created.id}`)).status).toBe(404)
    expect((await client.call("DELETE", `/v1/webhooks/${created.id}`)).status).toBe(404)
    expect((await client.call("GET", `/v1/webhook-deliveries/${ping.id}`)).status).toBe(404)
  })

  it("another project's endpoint is not found", async () => {
    const owner = api(gw, await gw.createProject())
    const stranger = api(gw, await gw.createProject())
    const created = await owner.createEndpoint({ url: receiver.url })
    for (const [method, path, body] of [
      ["GET", `/v1/webhooks/${created.id}`, undefined],
      ["PATCH", `/v1/webhooks/${created.id}`, { enabled: false }],
      ["DELETE", `/v1/webhooks/${created.id}`, undefined],
      ["POST", `/v1/webhooks/${created.id}/rotate-secret`, undefined],
      ["POST", `/v1/webhooks/${created.id}/test`, undefined]
    ] as const) {
      const res = await stranger.call(method, path, body)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toMatchObject(platformError("not_found"))
    }
    expect((await owner.endpoint(created.id)).enabled).toBe(true)
  })
})

describe("secret rotation", () => {
  it("answers a new secret once; later deliveries are signed with it and not with the old one", async () => {
    const project = await gw.createProject()
    const client = api(gw, project)
    const own = await startReceiver()
    try {
      const created = await client.createEndpoint({ url: own.url })
      const res = await client.call("POST", `/v1/webhooks/${created.id}/rotate-secret`)
      expect(res.status).toBe(200)
      const rotated = res.body as EndpointBody & { secret: string }
      expect(rotated.secret).toMatch(/^whsec_/)
      expect(rotated.secret).not.toBe(created.secret)
      expect(rotated.id).toBe(created.id)
      const ping = await client.ping(created.id)
      await deliveryWhen(gw, project, ping.id, (d) => d.status === "succeeded")
      const [request] = own.received
      expect(verifyWebhookSignature(rotated.secret, request!.body, request!.headers["x-webhook-signature"])).toBe(true)
      expect(verifyWebhookSignature(created.secret, request!.body, request!.headers["x-webhook-signature"])).toBe(false)
    } finally {
      await own.close()
    }
  })
})

describe("test event", () => {
  it("POST /v1/webhooks/{id}/test delivers a webhook.ping to that endpoint only, whatever its filters", async () => {
    const project = await gw.createProject()
    const client = api(gw, project)
    const own = await startReceiver()
    const bystander = await startReceiver()
    try {
      const target = await client.createEndpoint({ url: own.url, events: ["usage.recorded"] })
      await client.createEndpoint({ url: bystander.url })
      const delivery = await client.ping(target.id)
      expect(delivery).toMatchObject({ endpoint_id: target.id, status: "pending", event: { type: "webhook.ping" } })
      expect(delivery.event.id).toMatch(/^evt_/)
      await deliveryWhen(gw, project, delivery.id, (d) => d.status === "succeeded")
      const [body] = own.payloads()
      expect(body).toMatchObject({ type: "webhook.ping", data: { event_id: delivery.event.id, endpoint_id: target.id } })
      expect(own.received[0]!.headers["x-webhook-event"]).toBe("webhook.ping")
      expect(bystander.received).toHaveLength(0)
    } finally {
      await own.close()
      await bystander.close()
    }
  })

  it("a disabled endpoint refuses test events with 409", async () => {
    const client = api(gw, await gw.createProject())
    const created = await client.createEndpoint({ url: receiver.url, enabled: false })
    const res = await client.call("POST", `/v1/webhooks/${created.id}/test`)
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject(platformError("endpoint_disabled"))
  })
})

describe("OpenAPI", () => {
  it("documents every webhook operation under the secret-key scheme", async () => {
    const res = await call(gw.baseUrl, "GET", "/openapi.json")
    expect(res.status).toBe(200)
    const paths = (res.body as { paths: Record<string, Record<string, { security?: unknown }>> }).paths
    expect(Object.keys(paths["/v1/webhooks"]!).sort()).toEqual(["get", "post"])
    expect(Object.keys(paths["/v1/webhooks/{id}"]!).sort()).toEqual(["delete", "get", "patch"])
    expect(paths["/v1/webhooks/{id}/rotate-secret"]!.post).toBeDefined()
    expect(paths["/v1/webhooks/{id}/test"]!.post).toBeDefined()
    expect(paths["/v1/webhook-deliveries"]!.get).toBeDefined()
    expect(paths["/v1/webhook-deliveries/{id}"]!.get).toBeDefined()
    expect(paths["/v1/webhook-deliveries/{id}/replay"]!.post!.security).toEqual([{ secretKey: [] }])
  })
})
