/**
 * Domain events from other modules reach subscribers end to end: `session.*` from sessions and
 * `provider_connection.*` / `provider_model_sync.*` from provider connections, signed and carrying `event_id`.
 */
import { verify } from "@octokit/webhooks-methods"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhookSignature } from "../../modules/webhooks/signature.ts"
import { startFakeOpenAI } from "../fakes/catalog-openai.ts"
import { type Receiver, startReceiver } from "../fakes/webhook-receiver.ts"
import { bearer, call } from "../http.ts"
import { approve, createSession, type Env, startSessionsEnv, turn } from "../sessions/helpers.ts"

let env: Env
let receiver: Receiver
let secret: string

beforeAll(async () => {
  env = await startSessionsEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", QUEUE_POLL_INTERVAL_MS: "50" })
  receiver = await startReceiver()
  const created = await call(env.gw.baseUrl, "POST", "/v1/webhooks", {
    headers: bearer(env.gw.project.secretKey),
    json: { url: receiver.url, events: ["session", "provider_connection", "provider_model_sync"] }
  })
  expect(created.status).toBe(201)
  secret = (created.body as { secret: string }).secret
})
afterAll(async () => {
  await env?.close()
  await receiver?.close()
})

const typesReceived = () => receiver.payloads().map((p) => p.type)

const waitForType = async (type: string) => {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const found = receiver.payloads().find((p) => p.type === type)
    if (found) return found
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no ${type} webhook; got ${typesReceived().join(", ")}`)
}

describe("session events", () => {
  it("a session's creation, pause, resume and completed turn are delivered, signed, with event ids", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ toolCalls: [{ id: "call_1", name: "lookup", arguments: { q: "x" } }] }, { text: "done" })
    const paused = await turn(env.gw, session.id, {
      input: "look it up",
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      pause_on_tool_calls: true
    })
    const actionId = paused.find((e) => e.event === "turn.paused")!.data.action_id as string
    await approve(env.gw, session.id, { action_id: actionId, tool_results: [{ action_id: actionId, output: "42" }] })

    const created = await waitForType("session.created")
    expect(created.data).toMatchObject({ session_id: session.id, event_id: expect.stringMatching(/^evt_/) })
    const pausedEvent = await waitForType("session.paused")
    expect(pausedEvent.data).toMatchObject({ session_id: session.id, action_id: actionId, tool: "lookup" })
    await waitForType("session.resumed")
    const completed = await waitForType("session.turn_completed")
    expect(completed.data).toMatchObject({ session_id: session.id, turn_number: 1 })
    expect(completed.api_version).toBeDefined()

    const delivery = receiver.received.find((r) => r.body.includes("session.turn_completed"))!
    const signature = String(delivery.headers["x-webhook-signature"])
    expect(verifyWebhookSignature(secret, delivery.body, signature)).toBe(true)
    expect(await verify(secret, delivery.body, signature)).toBe(true)
    expect(delivery.headers["x-webhook-event"]).toBe("session.turn_completed")
  })

  it("deleting a session publishes session.deleted", async () => {
    const session = await createSession(env.gw)
    const res = await call(env.gw.baseUrl, "DELETE", `/v1/sessions/${session.id}`, { headers: { SERVICE_API_KEY: env.gw.project.apiKey } })
    expect(res.status).toBe(200)
    const deleted = await waitForType("session.deleted")
    expect(deleted.data).toMatchObject({ session_id: expect.any(String) })
  })
})

describe("provider connection events", () => {
  it("creating, testing, syncing and deleting a connection publish their events without the key", async () => {
    const upstream = await startFakeOpenAI({ apiKey: "sk-events", models: [{ id: "gpt-4o-mini" }, { id: "gpt-4o" }] })
    try {
      const headers = bearer(env.gw.project.secretKey)
      const created = await call(env.gw.baseUrl, "POST", "/v1/provider-connections", {
        headers,
        json: { provider: "openai", api_key: "sk-events", base_url: upstream.baseUrl }
      })
      expect(created.status).toBe(201)
      const id = (created.body as { id: string }).id
      expect((await call(env.gw.baseUrl, "POST", `/v1/provider-connections/${id}/validate`, { headers })).status).toBe(200)
      expect((await call(env.gw.baseUrl, "POST", `/v1/provider-connections/${id}/sync`, { headers })).status).toBe(201)
      expect((await call(env.gw.baseUrl, "DELETE", `/v1/provider-connections/${id}`, { headers })).status).toBe(200)

      expect((await waitForType("provider_connection.created")).data).toMatchObject({ connection_id: id, provider: "openai" })
      expect((await waitForType("provider_connection.tested")).data).toMatchObject({ connection_id: id, valid: true })
      expect((await waitForType("provider_model_sync.completed")).data).toMatchObject({ connection_id: id })
      expect((await waitForType("provider_connection.deleted")).data).toMatchObject({ connection_id: id })
      expect(receiver.received.map((r) => r.body).join("\n")).not.toContain("sk-events")
    } finally {
      await upstream.close()
    }
  })
})
