/** Shared steps of the webhook tests: API calls, publishing through the server's own `Events`, waiting. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { expect } from "vitest"
import { Events, type PublishInput } from "../../modules/events/Service.ts"
import type { Gateway, TestProject } from "../harness.ts"
import { bearer, call } from "../http.ts"

export interface EndpointBody {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly description: string | null
  readonly enabled: boolean
  readonly status: "active" | "failing" | "disabled"
  readonly failure_reason: string | null
  readonly failed_at: string | null
  readonly last_error: string | null
  readonly secret?: string
  readonly created_at: string
  readonly updated_at: string
}

export interface AttemptBody {
  readonly attempt: number
  readonly attempted_at: string
  readonly status_code: number | null
  readonly latency_ms: number | null
  readonly error: string | null
  readonly response_snippet: string | null
}

export interface DeliveryBody {
  readonly id: string
  readonly endpoint_id: string
  readonly event: { id: string; type: string; api_version: string; occurred_at: string; data: Record<string, unknown> }
  readonly status: "pending" | "succeeded" | "failed"
  readonly attempt_count: number
  readonly next_attempt_at: string | null
  readonly retry_until: string
  readonly last_error: string | null
  readonly replay_of: string | null
  readonly created_at: string
  readonly completed_at: string | null
  readonly attempts: ReadonlyArray<AttemptBody>
}

export const api = (gw: Gateway, project: TestProject = gw.project) => ({
  call: (method: string, path: string, json?: unknown) =>
    call(gw.baseUrl, method, path, json === undefined ? { headers: bearer(project.secretKey) } : { headers: bearer(project.secretKey), json }),
  createEndpoint: async (body: Record<string, unknown>): Promise<EndpointBody & { secret: string }> => {
    const res = await call(gw.baseUrl, "POST", "/v1/webhooks", { headers: bearer(project.secretKey), json: body })
    expect(res.status, res.text).toBe(201)
    return res.body as EndpointBody & { secret: string }
  },
  endpoint: async (id: string): Promise<EndpointBody> => {
    const res = await call(gw.baseUrl, "GET", `/v1/webhooks/${id}`, { headers: bearer(project.secretKey) })
    expect(res.status, res.text).toBe(200)
    return res.body as EndpointBody
  },
  delivery: async (id: string): Promise<DeliveryBody> => {
    const res = await call(gw.baseUrl, "GET", `/v1/webhook-deliveries/${id}`, { headers: bearer(project.secretKey) })
    expect(res.status, res.text).toBe(200)
    return res.body as DeliveryBody
  },
  deliveries: async (query = ""): Promise<{ data: Array<DeliveryBody>; next_cursor: string | null }> => {
    const res = await call(gw.baseUrl, "GET", `/v1/webhook-deliveries${query}`, { headers: bearer(project.secretKey) })
    expect(res.status, res.text).toBe(200)
    return res.body as { data: Array<DeliveryBody>; next_cursor: string | null }
  },
  ping: async (endpointId: string): Promise<DeliveryBody> => {
    const res = await call(gw.baseUrl, "POST", `/v1/webhooks/${endpointId}/test`, { headers: bearer(project.secretKey) })
    expect(res.status, res.text).toBe(201)
    return res.body as DeliveryBody
  }
})

/** Publishes an event the way a module does: inside a transaction, through the server's `Events`. */
export const publish = (gw: Gateway, input: PublishInput) =>
  gw.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* Events
    return yield* sql.withTransaction(events.publish(input))
  }))

/** Polls `check` until it answers a value (not undefined), or fails after `timeoutMs`. */
export const eventually = async <A>(check: () => Promise<A | undefined>, timeoutMs = 10_000, what = "condition"): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Waits until the delivery satisfies `predicate` and answers it. */
export const deliveryWhen = (
  gw: Gateway,
  project: TestProject,
  id: string,
  predicate: (delivery: DeliveryBody) => boolean,
  what = "delivery state"
) =>
  eventually(async () => {
    const delivery = await api(gw, project).delivery(id)
    return predicate(delivery) ? delivery : undefined
  }, 10_000, what)

/** Real time during which a worker polling every 50 ms would certainly have acted. */
export const settle = (ms = 400) => new Promise((resolve) => setTimeout(resolve, ms))
