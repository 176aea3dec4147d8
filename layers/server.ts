/**
 * Composition: infrastructure layers (config, database, crypto) → domain services → HTTP handlers → the HttpApi
 * app. Entry points (`layers/main/*`) add a server (Node) or a web handler (Deno); tests swap any layer.
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Console, Effect, Layer } from "effect"
import { AuthHttpLive, AuthMiddlewareLive } from "../modules/auth/Http.ts"
import { Credentials } from "../modules/auth/Service.ts"
import { ChatHttpLive, OpenAiChatHttpLive } from "../modules/chat/Http.ts"
import { ChatRouter } from "../modules/chat/Router.ts"
import { ChatGateway } from "../modules/chat/Service.ts"
import { SessionsHttpLive } from "../modules/sessions/Http.ts"
import { Sessions } from "../modules/sessions/Service.ts"
import { CatalogHttpLive } from "../modules/catalog/Http.ts"
import { Catalog } from "../modules/catalog/Service.ts"
import { ConnectionsHttpLive } from "../modules/connections/Http.ts"
import { ProviderConnections } from "../modules/connections/Service.ts"
import { CustomProvidersHttpLive } from "../modules/custom-providers/Http.ts"
import { CustomProviders } from "../modules/custom-providers/Service.ts"
import { HealthHttpLive } from "../modules/health/Http.ts"
import { ModelsHttpLive } from "../modules/models/Http.ts"
import { ModelListing } from "../modules/models/Service.ts"
import { DashboardProjectsHttpLive, ProjectsHttpLive, WhoAmIHttpLive } from "../modules/projects/Http.ts"
import { Projects, revealKeys } from "../modules/projects/Service.ts"
import { UsageHttpLive } from "../modules/usage/Http.ts"
import { Billing } from "../modules/usage/Service.ts"
import { VisionHttpLive } from "../modules/vision/Http.ts"
import { Vision } from "../modules/vision/Service.ts"
import { VoiceHttpLive } from "../modules/voice/Http.ts"
import { VoiceKeys } from "../modules/voice/Keys.ts"
import { Voice } from "../modules/voice/Service.ts"
import { Events } from "../modules/events/Service.ts"
import { WebhooksHttpLive } from "../modules/webhooks/Http.ts"
import { Webhooks } from "../modules/webhooks/Service.ts"
import { AppConfig } from "./config.ts"
import { SecretBox } from "./crypto.ts"
import { DatabaseLive } from "./database.ts"
import { ProviderAdaptersLive } from "./providers/Service.ts"
import { GatewayApi } from "./http/api.ts"
import { ApiGuardLive } from "./http/errors.ts"
import { requestMiddleware } from "./http/middleware.ts"
import { JobQueue } from "./queue/JobQueue.ts"
import { QueueWorkerLive } from "./queue/Worker.ts"

/** Database (with migrations applied) and the master-key box; needs `AppConfig`. */
export const InfraLive = Layer.mergeAll(DatabaseLive, SecretBox.layer)

/** The chat gateway: routing over the catalog, provider adapters with their own keep-alive client. */
const ChatLive = ChatGateway.Default.pipe(
  Layer.provideMerge(ChatRouter.Default),
  Layer.provideMerge(ProviderAdaptersLive)
)

/** Voice reads a project's BYOK keys from its provider connections. */
const VoiceKeysLive = Layer.effect(VoiceKeys, Effect.map(ProviderConnections, (c) => ({ byokKey: c.byokKey })))

/** Every domain service, over the infrastructure: each layer here may use the ones below it. */
export const ServicesLive = Layer.mergeAll(
  Projects.Default,
  ModelListing.Default,
  Sessions.Default,
  Vision.Default,
  Voice.Default.pipe(Layer.provide(VoiceKeysLive))
).pipe(
  Layer.provideMerge(ChatLive),
  Layer.provideMerge(
    Layer.mergeAll(Catalog.Default, CustomProviders.Default, ProviderConnections.Default, Billing.Default)
  ),
  Layer.provideMerge(Events.Default),
  Layer.provideMerge(Webhooks.Default),
  Layer.provideMerge(JobQueue.Default),
  Layer.provideMerge(Credentials.Default)
)

const HandlersLive = Layer.mergeAll(
  HealthHttpLive,
  AuthHttpLive,
  ProjectsHttpLive,
  WhoAmIHttpLive,
  DashboardProjectsHttpLive,
  UsageHttpLive,
  CatalogHttpLive,
  ModelsHttpLive,
  CustomProvidersHttpLive,
  ConnectionsHttpLive,
  ChatHttpLive,
  OpenAiChatHttpLive,
  VisionHttpLive,
  VoiceHttpLive,
  SessionsHttpLive,
  WebhooksHttpLive
)

/** The HttpApi with handlers, security, error envelopes, `/openapi.json` and `/docs`. */
export const ApiLive = Layer.mergeAll(
  ApiGuardLive,
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiScalar.layer({ path: "/docs" })
).pipe(
  Layer.provideMerge(
    HttpApiBuilder.api(GatewayApi).pipe(Layer.provide(HandlersLive), Layer.provide(AuthMiddlewareLive))
  )
)

/** Creates and prints the default project's keys on the first start of an empty database. */
export const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (!config.bootstrapDefaultProject) return
    const created = yield* Projects.pipe(Effect.flatMap((projects) => projects.bootstrap))
    if (!created) return
    const keys = revealKeys(created)
    // Printed once to the terminal (not through the logger): these keys are never shown again.
    yield* Console.log([
      "",
      "  Created the default project " + created.project.id,
      "  Secret key (Authorization: Bearer):  " + keys.secret_key,
      "  API key (SERVICE_API_KEY header):    " + keys.api_key,
      "  Store them now: they are kept only as hashes and cannot be shown again.",
      ""
    ].join("\n"))
  })
)

/** Everything a server needs except the listener: `AppConfig` in, HttpApi app and the job worker out. */
export const AppLive = Layer.merge(ApiLive, QueueWorkerLive).pipe(
  Layer.provideMerge(BootstrapLive),
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(InfraLive)
)

/** The request middleware (request id, access log). */
export const httpMiddleware = requestMiddleware(GatewayApi)
