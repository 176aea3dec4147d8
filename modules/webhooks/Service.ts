/**
 * Webhooks: endpoints (subscriptions) of a project, the fan-out of published events into deliveries, the
 * delivery job (sign, send, record the attempt, schedule the retry), the delivery log and replays.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Either, Option, Redacted, Schema } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { generateId, generateSecret, SecretBox } from "../../layers/crypto.ts"
import { JobKind, JobOutcome, JobQueue } from "../../layers/queue/JobQueue.ts"
import { ApiError } from "../../schemas/errors.ts"
import { filterKeysFor, PING_EVENT_TYPE, WEBHOOK_API_VERSION } from "../../schemas/events.ts"
import type { WebhookDelivery, WebhookEndpoint } from "../../schemas/webhooks.ts"
import { judge, nextAttemptAt, RETRY_BUDGET } from "./Policy.ts"
import {
  type AttemptRow,
  type DeliveryFilters,
  type DeliveryRow,
  type EndpointChanges,
  type EndpointRow,
  makeWebhooksRepo,
  type PageAfter
} from "./Repo.ts"
import { signWebhookPayload } from "./signature.ts"
import { parseTargetUrl, resolveTarget, TargetRejected } from "./Target.ts"
import { destroyAgents, makeAgents, postWebhook, type WireResult } from "./Transport.ts"

/** Sends one delivery; its handler keeps the delivery's own retry schedule, so the job itself rarely fails. */
export const DeliverWebhook = JobKind.make("webhooks.deliver", Schema.Struct({ delivery_id: Schema.String }), {
  maxAttempts: 1000
})

/** Endpoints one project may have: every published event fans out to each of them inside the publisher's transaction. */
export const MAX_ENDPOINTS_PER_PROJECT = 50

const USER_AGENT = `agent-gateway-webhooks/${WEBHOOK_API_VERSION}`

export type WebhookEndpointView = typeof WebhookEndpoint.Type
export type WebhookDeliveryView = typeof WebhookDelivery.Type

/** An event handed over by `Events.publish`, inside its transaction. */
export interface OutgoingEvent {
  readonly id: string
  readonly projectId: string
  readonly type: string
  readonly data: Readonly<Record<string, unknown>>
  readonly occurredAt: Date
}

/** An event as deliveries store it: `data` already rendered to the JSON text every body carries. */
interface StoredEvent {
  readonly id: string
  readonly projectId: string
  readonly type: string
  readonly eventData: string
  readonly occurredAt: Date
}

const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const toEndpoint = (row: EndpointRow): WebhookEndpointView => ({
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

const parseData = (text: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(text)
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {}
}

const toDelivery = (row: DeliveryRow, attempts: ReadonlyArray<AttemptRow>): WebhookDeliveryView => ({
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

/** The exact body of one attempt: the stored event data, framed with this attempt's timestamp. */
export const renderBody = (row: DeliveryRow, timestamp: Date): string =>
  `{"type":${JSON.stringify(row.event_type)},"timestamp":${JSON.stringify(timestamp.toISOString())},` +
  `"api_version":${JSON.stringify(WEBHOOK_API_VERSION)},"occurred_at":${JSON.stringify(row.occurred_at.toISOString())},` +
  `"data":${row.event_data}}`

/** `data` as delivered: `event_id` first, then the publisher's fields (which cannot override it). */
const eventDataText = (eventId: string, data: Readonly<Record<string, unknown>>): string => {
  const framed: Record<string, unknown> = { event_id: eventId }
  Object.assign(framed, data)
  framed.event_id = eventId
  return JSON.stringify(framed)
}

const encodeCursor = (row: { readonly created_at: Date; readonly id: string }) =>
  Buffer.from(`${row.created_at.getTime()}.${row.id}`, "utf8").toString("base64url")

const decodeCursor = (cursor: string | undefined): Effect.Effect<PageAfter | undefined, ApiError> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const dot = text.indexOf(".")
  const ms = Number(text.slice(0, dot))
  if (dot <= 0 || !Number.isSafeInteger(ms) || dot === text.length - 1) {
    return Effect.fail(ApiError.badRequest("cursor is not valid", { code: "invalid_cursor", param: "cursor" }))
  }
  return Effect.succeed({ createdAt: new Date(ms), id: text.slice(dot + 1) })
}

/** `*` swallows everything else; duplicates go. */
const normalizeFilters = (events: ReadonlyArray<string>): ReadonlyArray<string> =>
  events.includes("*") ? ["*"] : [...new Set(events)]

const page = <Row extends { readonly created_at: Date; readonly id: string }, View>(
  rows: ReadonlyArray<Row>,
  limit: number,
  view: (row: Row) => View
) => ({
  data: rows.slice(0, limit).map(view),
  next_cursor: rows.length > limit ? encodeCursor(rows[limit - 1]!) : null
})

export class Webhooks extends Effect.Service<Webhooks>()("Webhooks", {
  scoped: Effect.gen(function*() {
    const repo = yield* makeWebhooksRepo
    const box = yield* SecretBox
    const config = yield* AppConfig
    const queue = yield* JobQueue
    const agents = yield* Effect.acquireRelease(Effect.sync(makeAgents), (a) => Effect.sync(() => destroyAgents(a)))
    const { allowPrivateTargets, attemptTimeoutMs } = config.webhooks

    /** The URL passes the SSRF check of `Target.ts` now; answers it normalised. */
    const checkUrl = (raw: string) =>
      Effect.gen(function*() {
        const url = yield* Either.match(parseTargetUrl(raw), { onLeft: Effect.fail, onRight: Effect.succeed })
        yield* resolveTarget(url, allowPrivateTargets)
        return url.toString()
      }).pipe(
        Effect.mapError((error) =>
          ApiError.badRequest(error.message, {
            code: error._tag === "TargetRejected" ? error.code : "invalid_url",
            param: "url"
          })
        )
      )

    const findEndpoint = (projectId: string, id: string) =>
      repo.findEndpoint(projectId, id).pipe(
        Effect.orDie,
        Effect.flatMap((row) => row ? Effect.succeed(row) : Effect.fail(ApiError.notFound("Webhook endpoint")))
      )

    const deliveryView = (row: DeliveryRow) =>
      repo.attemptsOf([row.id]).pipe(Effect.orDie, Effect.map((attempts) => toDelivery(row, attempts)))

    /** Inserts deliveries and their jobs on the ambient connection (the caller's transaction, if any). */
    const enqueueDeliveries = (
      event: StoredEvent,
      endpointIds: ReadonlyArray<string>,
      replayOf: string | null = null
    ): Effect.Effect<ReadonlyArray<DeliveryRow>, SqlError> =>
      Effect.gen(function*() {
        const now = yield* nowDate
        const rows = yield* repo.insertDeliveries(endpointIds.map((endpointId) => ({
          id: generateId("whd"),
          project_id: event.projectId,
          endpoint_id: endpointId,
          event_id: event.id,
          event_type: event.type,
          event_data: event.eventData,
          occurred_at: event.occurredAt,
          status: "pending" as const,
          next_attempt_at: now,
          deadline_at: new Date(now.getTime() + Duration.toMillis(RETRY_BUDGET)),
          replay_of: replayOf,
          created_at: now
        })))
        yield* queue.enqueueMany(DeliverWebhook, rows.map((row) => ({ delivery_id: row.id })))
        return rows
      })

    const copyDelivery = (endpoint: EndpointRow, event: StoredEvent, replayOf: string | null) =>
      Effect.gen(function*() {
        if (!endpoint.enabled) {
          return yield* ApiError.conflict("Webhook endpoint is disabled; enable it first", "endpoint_disabled")
        }
        const [row] = yield* repo.withTransaction(enqueueDeliveries(event, [endpoint.id], replayOf)).pipe(
          Effect.orDie
        )
        return yield* deliveryView(row!)
      })

    /** Sends one attempt of a delivery and records it; answers the job outcome. */
    const deliver = (deliveryId: string) =>
      Effect.gen(function*() {
        const row = yield* repo.loadForSend(deliveryId)
        if (!row || row.status !== "pending") return JobOutcome.Done()
        const started = yield* nowDate
        if (row.next_attempt_at !== null && row.next_attempt_at > started) {
          return JobOutcome.RetryAt({ at: row.next_attempt_at, error: "not due yet" })
        }
        if (!row.enabled) {
          yield* repo.abandon(row.id, "endpoint disabled", started)
          return JobOutcome.Done()
        }
        const attempt = row.attempt_count + 1
        const secret = yield* box.decrypt(row.secret_ciphertext).pipe(Effect.option)
        if (Option.isNone(secret)) {
          yield* repo.abandon(row.id, "the endpoint secret cannot be decrypted", started)
          return JobOutcome.Done()
        }
        const body = renderBody(row, started)
        const headers = {
          "content-type": "application/json",
          "user-agent": USER_AGENT,
          "x-webhook-signature": signWebhookPayload(Redacted.value(secret.value), body),
          "x-webhook-event": row.event_type,
          "x-webhook-timestamp": started.toISOString(),
          "x-webhook-delivery": row.id
        }
        const target = yield* resolveTarget(new URL(row.url), allowPrivateTargets).pipe(Effect.either)
        const wire: WireResult | { readonly blocked: string } = Either.isRight(target)
          ? yield* postWebhook({ target: target.right, headers, body, timeoutMs: attemptTimeoutMs, agents })
          : target.left instanceof TargetRejected
          ? { blocked: `blocked: ${target.left.message}` }
          : { statusCode: null, latencyMs: 0, error: target.left.message, snippet: null, retryAfter: null }
        const finished = yield* Clock.currentTimeMillis
        const verdict = "blocked" in wire
          ? { _tag: "Final" as const, error: wire.blocked }
          : judge(wire, finished)
        const attemptRow: AttemptRow = {
          delivery_id: row.id,
          attempt,
          attempted_at: started,
          status_code: "blocked" in wire ? null : wire.statusCode,
          latency_ms: "blocked" in wire ? null : wire.latencyMs,
          error: verdict._tag === "Succeeded" ? null : verdict.error,
          response_snippet: "blocked" in wire ? null : wire.snippet
        }
        const finishedAt = new Date(finished)
        switch (verdict._tag) {
          case "Succeeded": {
            yield* repo.recordAttempt(attemptRow, { _tag: "Succeeded", now: finishedAt })
            yield* Effect.logInfo("webhook delivered")
            return JobOutcome.Done()
          }
          case "Final": {
            yield* repo.recordAttempt(attemptRow, { _tag: "Failed", error: verdict.error, now: finishedAt })
            yield* Effect.logWarning("webhook delivery failed for good", verdict.error)
            return JobOutcome.Done()
          }
          case "Retry": {
            const next = nextAttemptAt({
              attempt,
              finishedAt: finished,
              deadline: row.deadline_at.getTime(),
              retryAfterMs: verdict.retryAfterMs
            })
            if (Option.isNone(next)) {
              yield* repo.recordAttempt(attemptRow, {
                _tag: "Failed",
                error: verdict.error,
                now: finishedAt,
                markEndpointFailing: `delivery ${row.id} failed every attempt for 24 hours (retry budget spent)`
              })
              yield* Effect.logWarning("webhook retry budget spent; endpoint marked failing", verdict.error)
              return JobOutcome.Done()
            }
            yield* repo.recordAttempt(attemptRow, { _tag: "Retry", error: verdict.error, at: next.value })
            yield* Effect.logInfo("webhook attempt failed, will retry", verdict.error)
            return JobOutcome.RetryAt({ at: next.value, error: verdict.error })
          }
        }
      }).pipe(Effect.annotateLogs({ delivery_id: deliveryId }))

    yield* queue.register(DeliverWebhook, ({ delivery_id }) => deliver(delivery_id))

    return {
      create: (
        projectId: string,
        input: {
          readonly url: string
          readonly events?: ReadonlyArray<string> | undefined
          readonly description?: string | null | undefined
          readonly enabled?: boolean | undefined
        }
      ) =>
        Effect.gen(function*() {
          const url = yield* checkUrl(input.url)
          const existing = yield* repo.listEndpoints(projectId, MAX_ENDPOINTS_PER_PROJECT, undefined).pipe(
            Effect.orDie
          )
          if (existing.length >= MAX_ENDPOINTS_PER_PROJECT) {
            return yield* ApiError.badRequest(
              `A project can have at most ${MAX_ENDPOINTS_PER_PROJECT} webhook endpoints`,
              { code: "too_many_webhooks" }
            )
          }
          const secret = generateSecret("whsec_")
          const now = yield* nowDate
          const row = yield* repo.insertEndpoint({
            id: generateId("wh"),
            project_id: projectId,
            url,
            events: normalizeFilters(input.events ?? ["*"]),
            description: input.description ?? null,
            enabled: input.enabled ?? true,
            secret_ciphertext: box.encrypt(secret),
            created_at: now,
            updated_at: now
          }).pipe(Effect.orDie)
          return { ...toEndpoint(row), secret }
        }),

      list: (projectId: string, options: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
        Effect.gen(function*() {
          const limit = options.limit ?? 20
          const after = yield* decodeCursor(options.cursor)
          const rows = yield* repo.listEndpoints(projectId, limit + 1, after).pipe(Effect.orDie)
          return page(rows, limit, toEndpoint)
        }),

      get: (projectId: string, id: string) => Effect.map(findEndpoint(projectId, id), toEndpoint),

      update: (
        projectId: string,
        id: string,
        input: {
          readonly url?: string | undefined
          readonly events?: ReadonlyArray<string> | undefined
          readonly description?: string | null | undefined
          readonly enabled?: boolean | undefined
        }
      ) =>
        Effect.gen(function*() {
          yield* findEndpoint(projectId, id)
          const changes: EndpointChanges = {
            ...(input.url === undefined ? {} : { url: yield* checkUrl(input.url) }),
            ...(input.events === undefined ? {} : { events: normalizeFilters(input.events) }),
            ...(input.description === undefined ? {} : { description: input.description }),
            ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
            updated_at: yield* nowDate
          }
          const row = yield* repo.updateEndpoint(projectId, id, changes).pipe(Effect.orDie)
          return row ? toEndpoint(row) : yield* ApiError.notFound("Webhook endpoint")
        }),

      remove: (projectId: string, id: string) =>
        repo.deleteEndpoint(projectId, id).pipe(
          Effect.orDie,
          Effect.flatMap((deleted) =>
            deleted
              ? Effect.succeed({ id, deleted: true, status: "deleted" })
              : Effect.fail(ApiError.notFound("Webhook endpoint"))
          )
        ),

      /** A new secret replaces the old one at once: later attempts, retries included, sign with it. */
      rotateSecret: (projectId: string, id: string) =>
        Effect.gen(function*() {
          yield* findEndpoint(projectId, id)
          const secret = generateSecret("whsec_")
          const row = yield* repo.updateEndpoint(projectId, id, {
            secret_ciphertext: box.encrypt(secret),
            updated_at: yield* nowDate
          }).pipe(Effect.orDie)
          return row ? { ...toEndpoint(row), secret } : yield* ApiError.notFound("Webhook endpoint")
        }),

      /** Sends a `webhook.ping` event to this endpoint only, whatever its filters. */
      sendTest: (projectId: string, id: string) =>
        Effect.gen(function*() {
          const endpoint = yield* findEndpoint(projectId, id)
          const eventId = generateId("evt")
          return yield* copyDelivery(endpoint, {
            id: eventId,
            projectId,
            type: PING_EVENT_TYPE,
            eventData: eventDataText(eventId, {
              endpoint_id: endpoint.id,
              message: "Test event sent by POST /v1/webhooks/{id}/test"
            }),
            occurredAt: yield* nowDate
          }, null)
        }),

      listDeliveries: (
        projectId: string,
        options: DeliveryFilters & { readonly limit?: number | undefined; readonly cursor?: string | undefined }
      ) =>
        Effect.gen(function*() {
          const limit = options.limit ?? 20
          const after = yield* decodeCursor(options.cursor)
          const rows = yield* repo.listDeliveries(projectId, options, limit + 1, after).pipe(Effect.orDie)
          const shown = rows.slice(0, limit)
          const attempts = yield* repo.attemptsOf(shown.map((row) => row.id)).pipe(Effect.orDie)
          return page(rows, limit, (row) => toDelivery(row, attempts.filter((a) => a.delivery_id === row.id)))
        }),

      getDelivery: (projectId: string, id: string) =>
        repo.findDelivery(projectId, id).pipe(
          Effect.orDie,
          Effect.flatMap((row) => row ? deliveryView(row) : Effect.fail(ApiError.notFound("Webhook delivery")))
        ),

      /** A new delivery of the same event (same `event_id` and data) to the same endpoint, with a fresh budget. */
      replay: (projectId: string, id: string) =>
        Effect.gen(function*() {
          const original = yield* repo.findDelivery(projectId, id).pipe(Effect.orDie)
          if (!original) return yield* ApiError.notFound("Webhook delivery")
          const endpoint = yield* findEndpoint(projectId, original.endpoint_id)
          return yield* copyDelivery(endpoint, {
            id: original.event_id,
            projectId,
            type: original.event_type,
            eventData: original.event_data,
            occurredAt: original.occurred_at
          }, original.id)
        }),

      /**
       * Creates a delivery (and its job) for every enabled endpoint of the project subscribed to the event.
       * Called by `Events.publish` inside the publisher's transaction.
       */
      fanOut: (event: OutgoingEvent): Effect.Effect<number, SqlError> =>
        repo.matchingEndpoints(event.projectId, filterKeysFor(event.type)).pipe(
          Effect.flatMap((ids) =>
            ids.length === 0 ? Effect.succeed([]) : enqueueDeliveries({
              id: event.id,
              projectId: event.projectId,
              type: event.type,
              eventData: eventDataText(event.id, event.data),
              occurredAt: event.occurredAt
            }, ids)
          ),
          Effect.map((rows) => rows.length)
        )
    }
  })
}) {}
