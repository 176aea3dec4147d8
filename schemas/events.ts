/**
 * Platform event types (§6.2): each is a family prefix, a dot and a name. Modules publish these through
 * `Events.publish` (modules/events); webhooks deliver them. Payload changes are additive only (§9).
 */
import { Schema } from "effect"

/** The version of the webhook payload format, carried as `api_version` in every body. */
export const WEBHOOK_API_VERSION = "1.1.0"

export const EVENT_TYPES_BY_FAMILY = {
  provider_connection: ["created", "updated", "deleted", "tested"],
  provider_model_sync: ["started", "completed", "failed"],
  tenant: ["created", "updated", "suspended", "reactivated", "deleting", "deleted", "exported"],
  agent: [
    "created",
    "updated",
    "deleted",
    "version_created",
    "version_validated",
    "version_tested",
    "version_published",
    "version_deprecated",
    "version_retired"
  ],
  installation: ["created", "updated", "upgraded", "deleted"],
  knowledge_source: ["created", "processing", "ready", "failed", "deleted"],
  connection: ["created", "updated", "refreshed", "expired", "revoked", "deleted"],
  session: ["created", "turn_completed", "paused", "resumed", "completed", "deleted"],
  run: ["created", "started", "requires_action", "completed", "failed", "cancelled", "expired"],
  subagent: ["started", "completed", "failed"],
  action: ["created", "approved", "rejected", "executing", "completed", "failed", "expired"],
  usage: ["recorded", "threshold_reached"]
} as const

type ByFamily = typeof EVENT_TYPES_BY_FAMILY
export type EventFamily = keyof ByFamily
export type EventType = { [F in EventFamily]: `${F}.${ByFamily[F][number]}` }[EventFamily]

export const EVENT_FAMILIES = Object.keys(EVENT_TYPES_BY_FAMILY) as ReadonlyArray<EventFamily>

export const EVENT_TYPES: ReadonlyArray<EventType> = EVENT_FAMILIES.flatMap((family) =>
  EVENT_TYPES_BY_FAMILY[family].map((name) => `${family}.${name}` as EventType)
)

/** The family prefix of an event type. */
export const familyOf = (type: string): string => type.slice(0, type.indexOf("."))

/** Every family name (`session`, `run`, ...). `subagent` events are also delivered to `run` subscribers. */
export const EventFamilySchema = Schema.Literal(...EVENT_FAMILIES).annotations({ identifier: "EventFamily" })

/** Every event type a module may publish (`session.created`, `run.completed`, ...). */
export const EventTypeSchema = Schema.Literal(...EVENT_TYPES).annotations({ identifier: "EventType" })

/** The test event sent by `POST /v1/webhooks/{id}/test`; delivered only to that endpoint. */
export const PING_EVENT_TYPE = "webhook.ping"

/**
 * What an endpoint subscribes to: `*` (everything), a family (`session`), or one event type
 * (`session.created`).
 */
export const EventFilterSchema = Schema.Union(
  Schema.Literal("*"),
  EventFamilySchema,
  EventTypeSchema
).annotations({
  identifier: "EventFilter",
  description: "`*` for every event, a family name such as `session`, or one event type such as `session.created`"
})

/** The keys an endpoint filter must contain for an event of `type` to reach it. */
export const filterKeysFor = (type: string): ReadonlyArray<string> => {
  const family = familyOf(type)
  return family === "subagent" ? ["*", family, type, "run"] : ["*", family, type]
}

/** The body of a webhook delivery (§6.2). `timestamp` is when this attempt was signed. */
export const WebhookPayload = Schema.Struct({
  type: Schema.String,
  timestamp: Schema.String,
  api_version: Schema.String,
  occurred_at: Schema.String,
  data: Schema.Struct(
    { event_id: Schema.String },
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  )
}).annotations({ identifier: "WebhookPayload" })
