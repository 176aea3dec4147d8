/**
 * Node entry point: `npm start`. Serves the API on `HOST:PORT`, drains in-flight requests on SIGTERM/SIGINT,
 * then closes the database.
 */
import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AppConfig } from "../config.ts"
import { LoggingLive } from "../logging.ts"
import { AppLive, httpMiddleware } from "../server.ts"

export const NodeServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    HttpApiBuilder.serve(httpMiddleware).pipe(
      HttpServer.withLogAddress,
      HttpMiddleware.withTracerDisabledWhen(() => true),
      // The listener is released first (it waits for in-flight requests), the app and database after it.
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host })),
      Layer.provide(AppLive),
      Layer.provide(LoggingLive(config.logLevel))
    ))
).pipe(Layer.provide(AppConfig.layer))

Layer.launch(NodeServerLive).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
