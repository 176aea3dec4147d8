/** Handlers of the webhooks group: decode, call the service, answer. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { Webhooks } from "./Service.ts"

export const WebhooksHttpLive = HttpApiBuilder.group(GatewayApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const project = Effect.map(CurrentProject, (p) => p.projectId)
    return handlers
      .handle("createWebhook", ({ payload }) => Effect.flatMap(project, (id) => webhooks.create(id, payload)))
      .handle("listWebhooks", ({ urlParams }) => Effect.flatMap(project, (id) => webhooks.list(id, urlParams)))
      .handle("getWebhook", ({ path }) => Effect.flatMap(project, (id) => webhooks.get(id, path.id)))
      .handle("updateWebhook", ({ path, payload }) =>
        Effect.flatMap(project, (id) => webhooks.update(id, path.id, payload)))
      .handle("deleteWebhook", ({ path }) => Effect.flatMap(project, (id) => webhooks.remove(id, path.id)))
      .handle("rotateWebhookSecret", ({ path }) => Effect.flatMap(project, (id) => webhooks.rotateSecret(id, path.id)))
      .handle("testWebhook", ({ path }) => Effect.flatMap(project, (id) => webhooks.sendTest(id, path.id)))
      .handle("listWebhookDeliveries", ({ urlParams }) =>
        Effect.flatMap(project, (id) =>
          webhooks.listDeliveries(id, {
            limit: urlParams.limit,
            cursor: urlParams.cursor,
            endpointId: urlParams.endpoint_id,
            status: urlParams.status,
            eventType: urlParams.event_type
          })))
      .handle("getWebhookDelivery", ({ path }) => Effect.flatMap(project, (id) => webhooks.getDelivery(id, path.id)))
      .handle("replayWebhookDelivery", ({ path }) => Effect.flatMap(project, (id) => webhooks.replay(id, path.id)))
  }))
