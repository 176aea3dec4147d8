/** Webhook subscriptions and the delivery log (§4.2, §6.2). */
import { Schema } from "effect"
import { CursorQuery } from "./common.ts"
import { EventFilterSchema } from "./events.ts"

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)).annotations({
  description: "http or https URL that receives the deliveries"
})

const Description = Schema.String.pipe(Schema.maxLength(500))

const EventFilters = Schema.Array(EventFilterSchema).pipe(Schema.minItems(1), Schema.maxItems(100))

export const CreateWebhookRequest = Schema.Struct({
  url: Url,
  /** Families, event types or `*` (default `["*"]`). */
  events: Schema.optional(EventFilters),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "CreateWebhookRequest" })

export const UpdateWebhookRequest = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(EventFilters),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "UpdateWebhookRequest" })

export const WebhookEndpointStatus = Schema.Literal("active", "failing", "disabled")

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("webhook_endpoint"),
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  /** `disabled` when switched off, `failing` after a delivery used its whole retry budget, else `active`. */
  status: WebhookEndpointStatus,
  /** Why the endpoint is marked failing; cleared by the next successful delivery. */
  failure_reason: Schema.NullOr(Schema.String),
  /** When it was marked failing. */
  failed_at: Schema.NullOr(Schema.String),
  /** The error of the last failed attempt that marked it failing. */
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "WebhookEndpoint" })

export const WebhookEndpointWithSecret = Schema.Struct({
  ...WebhookEndpoint.fields,
  /** The signing secret (`whsec_…`), returned only at creation and rotation. */
  secret: Schema.String
}).annotations({ identifier: "WebhookEndpointWithSecret" })

export const WebhookDeliveryStatus = Schema.Literal("pending", "succeeded", "failed")

export const WebhookDeliveryAttempt = Schema.Struct({
  attempt: Schema.Int,
  attempted_at: Schema.String,
  /** HTTP status of the answer; null when none came (timeout, network error, blocked address). */
  status_code: Schema.NullOr(Schema.Int),
  latency_ms: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  /** The first 1,024 bytes of the answer body. */
  response_snippet: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookDeliveryAttempt" })

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("webhook_delivery"),
  endpoint_id: Schema.String,
  event: Schema.Struct({
    id: Schema.String,
    type: Schema.String,
    api_version: Schema.String,
    occurred_at: Schema.String,
    data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  }),
  status: WebhookDeliveryStatus,
  attempt_count: Schema.Int,
  /** When the next attempt is due (pending deliveries). */
  next_attempt_at: Schema.NullOr(Schema.String),
  /** Retries stop at this time (24 hours after the delivery was created). */
  retry_until: Schema.String,
  last_error: Schema.NullOr(Schema.String),
  /** The delivery this one replays. */
  replay_of: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  completed_at: Schema.NullOr(Schema.String),
  attempts: Schema.Array(WebhookDeliveryAttempt)
}).annotations({ identifier: "WebhookDelivery" })

export const WebhookDeliveryQuery = Schema.Struct({
  ...CursorQuery.fields,
  endpoint_id: Schema.optional(Schema.String),
  status: Schema.optional(WebhookDeliveryStatus),
  event_type: Schema.optional(Schema.String)
})
