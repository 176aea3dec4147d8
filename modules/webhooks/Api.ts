/**
 * Webhook subscriptions and the delivery log (§4.2). Secret project key only (§5): any other credential
 * answers 401.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CursorList, CursorQuery, DeletedResponse } from "../../schemas/common.ts"
import { errorResponse } from "../../schemas/errors.ts"
import {
  CreateWebhookRequest,
  UpdateWebhookRequest,
  WebhookDelivery,
  WebhookDeliveryQuery,
  WebhookEndpoint,
  WebhookEndpointWithSecret
} from "../../schemas/webhooks.ts"
import { SecretKeyAuth } from "../auth/Api.ts"

const IdPath = Schema.Struct({ id: Schema.String })

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("createWebhook", "/v1/webhooks")
      .setPayload(CreateWebhookRequest)
      .addSuccess(WebhookEndpointWithSecret, { status: 201 })
      .annotate(OpenApi.Description, "Subscribes an endpoint to event families. The answer holds the signing secret, shown only here.")
  )
  .add(
    HttpApiEndpoint.get("listWebhooks", "/v1/webhooks")
      .setUrlParams(CursorQuery)
      .addSuccess(CursorList(WebhookEndpoint))
  )
  .add(
    HttpApiEndpoint.get("getWebhook", "/v1/webhooks/:id")
      .setPath(IdPath)
      .addSuccess(WebhookEndpoint)
  )
  .add(
    HttpApiEndpoint.patch("updateWebhook", "/v1/webhooks/:id")
      .setPath(IdPath)
      .setPayload(UpdateWebhookRequest)
      .addSuccess(WebhookEndpoint)
  )
  .add(
    HttpApiEndpoint.del("deleteWebhook", "/v1/webhooks/:id")
      .setPath(IdPath)
      .addSuccess(DeletedResponse)
      .annotate(OpenApi.Description, "Deletes the endpoint and its delivery log; pending deliveries are dropped.")
  )
  .add(
    HttpApiEndpoint.post("rotateWebhookSecret", "/v1/webhooks/:id/rotate-secret")
      .setPath(IdPath)
      .addSuccess(WebhookEndpointWithSecret)
      .annotate(OpenApi.Description, "Replaces the signing secret at once; the new one is shown only here.")
  )
  .add(
    HttpApiEndpoint.post("testWebhook", "/v1/webhooks/:id/test")
      .setPath(IdPath)
      .addSuccess(WebhookDelivery, { status: 201 })
      .annotate(OpenApi.Description, "Sends a `webhook.ping` event to this endpoint only and answers the delivery.")
  )
  .add(
    HttpApiEndpoint.get("listWebhookDeliveries", "/v1/webhook-deliveries")
      .setUrlParams(WebhookDeliveryQuery)
      .addSuccess(CursorList(WebhookDelivery))
      .annotate(OpenApi.Description, "The delivery log, newest first, with every attempt of each delivery.")
  )
  .add(
    HttpApiEndpoint.get("getWebhookDelivery", "/v1/webhook-deliveries/:id")
      .setPath(IdPath)
      .addSuccess(WebhookDelivery)
  )
  .add(
    HttpApiEndpoint.post("replayWebhookDelivery", "/v1/webhook-deliveries/:id/replay")
      .setPath(IdPath)
      .addSuccess(WebhookDelivery, { status: 201 })
      .annotate(OpenApi.Description, "Enqueues a new delivery of the same event (same `data.event_id`) to the same endpoint.")
  )
  .middleware(SecretKeyAuth)
  .addError(errorResponse("platform", 400))
  .addError(errorResponse("platform", 404))
  .addError(errorResponse("platform", 409))
{}
