/**
 * Webhooks: endpoints (subscriptions) of a project, the fan-out of published events into deliveries, the
 * delivery log and replays. Sending is the `webhooks.deliver` job of `Deliver.ts`, registered here.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Either } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { generateId, generateSecret, SecretBox } from "../../layers/crypto.ts"
import { JobQueue } from "../../layers/queue/JobQueue.ts"
import { ApiError } from "../../schemas/errors.ts"
import { filterKeysFor, PING_EVENT_TYPE } from "../../schemas/events.ts"
import { DeliverWebhook, makeDeliver } from "./Deliver.ts"
import { RETRY_BUDGET } from "./Policy.ts"
import { type DeliveryFilters, type DeliveryRow, type EndpointChanges, type EndpointRow, makeWebhooksRepo } from "./Repo.ts"
import { parseTargetUrl, resolveTarget } from "./Target.ts"
import { destroyAgents, makeAgents } from "./Transport.ts"
import { decodeCursor, page, toDelivery, toEndpoint } from "./Views.ts"

/** Endpoints one project may have: every published event fans out to each of them inside the publisher's transaction. */
export const MAX_ENDPOINTS_PER_PROJECT = 50

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

/** `data` as delivered: `event_id` first, then the publisher's fields (which cannot override it). */
const eventDataText = (eventId: string, data: Readonly<Record<string, unknown>>): string => {
  const framed: Record<string, unknown> = { event_id: eventId }
  Object.assign(framed, data)
  framed.event_id = eventId
  return JSON.stringify(framed)
}

/** `*` swallows everything else; duplicates go. */
const normalizeFilters = (events: ReadonlyArray<string>): ReadonlyArray<string> =>
  events.includes("*") ? ["*"] : [...new Set(events)]

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

    const deliver = makeDeliver({ repo, box, agents, allowPrivateTargets, attemptTimeoutMs })

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
