/**
 * Domain events (the outbox). A module reports a change by publishing an event in the same transaction as the
 * change:
 *
 * ```ts
 * const events = yield* Events
 * yield* sql.withTransaction(Effect.gen(function*() {
 *   const session = yield* repo.insertSession(...)
 *   yield* events.publish({ projectId, type: "session.created", data: { session_id: session.id, status: "active" } })
 * }))
 * ```
 *
 * `publish` writes the event row and, through `Webhooks.fanOut`, one delivery (and its queue job) per subscribed
 * endpoint, all on the caller's transaction: a rolled-back change sends nothing, and a committed one cannot lose
 * its event. Called outside a transaction it dies, since it could then report a change that never happened.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Option } from "effect"
import { generateId } from "../../layers/crypto.ts"
import { EVENT_TYPES, type EventType } from "../../schemas/events.ts"
import { Webhooks } from "../webhooks/Service.ts"
import { makeEventsRepo } from "./Repo.ts"

export interface PublishInput {
  readonly projectId: string
  /** One of the event types of `schemas/events.ts` (`session.created`, `run.completed`, ...). */
  readonly type: EventType
  /**
   * The event's fields, delivered as the body's `data` after `event_id`. Name the resource by id
   * (`session_id`, `run_id`, ...) and add what a receiver needs without calling back; never secrets.
   */
  readonly data: Readonly<Record<string, unknown>>
}

export interface PublishedEvent {
  /** `evt_…`, delivered as `data.event_id`. */
  readonly id: string
  readonly projectId: string
  readonly type: EventType
  readonly data: Readonly<Record<string, unknown>>
  readonly occurredAt: Date
  /** Deliveries created (one per subscribed, enabled endpoint). */
  readonly deliveries: number
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES)

export class Events extends Effect.Service<Events>()("Events", {
  effect: Effect.gen(function*() {
    const repo = yield* makeEventsRepo
    const webhooks = yield* Webhooks

    const publish = (input: PublishInput): Effect.Effect<PublishedEvent, SqlError> =>
      Effect.gen(function*() {
        const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
        if (Option.isNone(transaction)) {
          return yield* Effect.dieMessage(
            `Events.publish(${input.type}) must run inside sql.withTransaction, with the change it reports`
          )
        }
        if (!KNOWN_TYPES.has(input.type)) return yield* Effect.dieMessage(`unknown event type ${input.type}`)
        const id = generateId("evt")
        const occurredAt = new Date(yield* Clock.currentTimeMillis)
        yield* repo.insert({
          id,
          project_id: input.projectId,
          type: input.type,
          data: JSON.stringify({ ...input.data, event_id: id }),
          created_at: occurredAt
        })
        const deliveries = yield* webhooks.fanOut({
          id,
          projectId: input.projectId,
          type: input.type,
          data: input.data,
          occurredAt
        })
        return { id, projectId: input.projectId, type: input.type, data: input.data, occurredAt, deliveries }
      })

    return { publish }
  })
}) {}
