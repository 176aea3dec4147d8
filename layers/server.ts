/**
 * Composition: infrastructure layers (config, database, crypto) → domain services → HTTP handlers → the HttpApi
 * app. Entry points (`layers/main/*`) add a server (Node) or a web handler (Deno); tests swap any layer.
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Console, Effect, Layer } from "effect"
import { AuthHttpLive, AuthMiddlewareLive } from "../modules/auth/Http.ts"
import { Credentials } from "../modules/auth/Service.ts"
import { HealthHttpLive } from "../modules/health/Http.ts"
import { DashboardProjectsHttpLive, ProjectsHttpLive, WhoAmIHttpLive } from "../modules/projects/Http.ts"
import { Projects, revealKeys } from "../modules/projects/Service.ts"
import { Events } from "../modules/events/Service.ts"
import { WebhooksHttpLive } from "../modules/webhooks/Http.ts"
import { Webhooks } from "../modules/webhooks/Service.ts"
import { AppConfig } from "./config.ts"
import { SecretBox } from "./crypto.ts"
import { DatabaseLive } from "./database.ts"
import { GatewayApi } from "./http/api.ts"
import { ApiGuardLive } from "./http/errors.ts"
import { requestMiddleware } from "./http/middleware.ts"
import { JobQueue } from "./queue/JobQueue.ts"
import { QueueWorkerLive } from "./queue/Worker.ts"

/** Database (with migrations applied) and the master-key box; needs `AppConfig`. */
export const InfraLive = Layer.mergeAll(DatabaseLive, SecretBox.layer)

/** Every domain service, over the infrastructure. */
export const ServicesLive = Layer.mergeAll(Projects.Default, Events.Default).pipe(
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
