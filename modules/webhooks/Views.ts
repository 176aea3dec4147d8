/** Wire shapes of endpoints and deliveries, and the opaque cursors of their lists. */
import { Effect } from "effect"
import { ApiError } from "../../schemas/errors.ts"
import { WEBHOOK_API_VERSION } from "../../schemas/events.ts"
import type { WebhookDelivery, WebhookEndpoint } from "../../schemas/webhooks.ts"
import type { AttemptRow, DeliveryRow, EndpointRow, PageAfter } from "./Repo.ts"

export type WebhookEndpointView = typeof WebhookEndpoint.Type
export type WebhookDeliveryView = typeof WebhookDelivery.Type

export const toEndpoint = (row: EndpointRow): WebhookEndpointView => ({
  id: row.id,
  object: "webhook_endpoint",
  url: row.url,
  events: [...row.events],
  description: row.description,
  enabled: row.enabled,
  status: !row.enabled ? "disabled" : row.failure_reason !== null ? "failing" : "active",
  failure_reason: row.failure_reason,
  failed_at: row.failed_at?.toISOString() ?? null,
  last_error: row.last_error,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

export const parseData = (text: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(text)
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {}
}

export const toDelivery = (row: DeliveryRow, attempts: ReadonlyArray<AttemptRow>): WebhookDeliveryView => ({
  id: row.id,
  object: "webhook_delivery",
  endpoint_id: row.endpoint_id,
  event: {
    id: row.event_id,
    type: row.event_type,
    api_version: WEBHOOK_API_VERSION,
    occurred_at: row.occurred_at.toISOString(),
    data: parseData(row.event_data)
  },
  status: row.status,
  attempt_count: row.attempt_count,
  next_attempt_at: row.status === "pending" ? row.next_attempt_at?.toISOString() ?? null : null,
  retry_until: row.deadline_at.toISOString(),
  last_error: row.last_error,
  replay_of: row.replay_of,
  created_at: row.created_at.toISOString(),
  completed_at: row.completed_at?.toISOString() ?? null,
  attempts: attempts.map((attempt) => ({
    attempt: attempt.attempt,
    attempted_at: attempt.attempted_at.toISOString(),
    status_code: attempt.status_code,
    latency_ms: attempt.latency_ms,
    error: attempt.error,
    response_snippet: attempt.response_snippet
  }))
})

export const encodeCursor = (row: { readonly created_at: Date; readonly id: string }) =>
  Buffer.from(`${row.created_at.getTime()}.${row.id}`, "utf8").toString("base64url")

export const decodeCursor = (cursor: string | undefined): Effect.Effect<PageAfter | undefined, ApiError> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const dot = text.indexOf(".")
  const ms = Number(text.slice(0, dot))
  if (dot <= 0 || !Number.isSafeInteger(ms) || dot === text.length - 1) {
    return Effect.fail(ApiError.badRequest("cursor is not valid", { code: "invalid_cursor", param: "cursor" }))
  }
  return Effect.succeed({ createdAt: new Date(ms), id: text.slice(dot + 1) })
}

export const page = <Row extends { readonly created_at: Date; readonly id: string }, View>(
  rows: ReadonlyArray<Row>,
  limit: number,
  view: (row: Row) => View
) => ({
  data: rows.slice(0, limit).map(view),
  next_cursor: rows.length > limit ? encodeCursor(rows[limit - 1]!) : null
})
