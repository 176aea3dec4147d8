/**
 * Deno entry point: `deno task start`. The same layers as Node, served by `Deno.serve` through the HttpApi web
 * handler. Layers are built before the listener opens (a failing migration stops the start, not the first request).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import { AppConfig } from "../config.ts"
import { LoggingLive } from "../logging.ts"
import { AppLive, httpMiddleware } from "../server.ts"

interface DenoServer {
  readonly finished: Promise<void>
  readonly addr: { readonly hostname: string; readonly port: number }
  shutdown(): Promise<void>
}

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { hostname: string; port: number }) => void },
    handler: (request: Request) => Promise<Response>
  ): DenoServer
  addSignalListener(signal: "SIGTERM" | "SIGINT", handler: () => void): void
  exit(code: number): never
}

const config = await Effect.runPromise(AppConfig.pipe(Effect.provide(AppConfig.layer)))
const logging = LoggingLive(config.logLevel)
const memoMap = Effect.runSync(Layer.makeMemoMap)
const app = AppLive.pipe(Layer.provideMerge(AppConfig.layer), Layer.provide(logging))
// Build every layer now, so start-up failures surface here.
const runtime = ManagedRuntime.make(app, memoMap)
await runtime.runPromise(Effect.void)

const { dispose, handler } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(app, HttpServer.layerContext, logging),
  { memoMap, middleware: httpMiddleware }
)

const server = Deno.serve({
  port: config.port,
  hostname: config.host,
  onListen: ({ hostname, port }) =>
    Effect.runSync(Effect.logInfo(`Listening on http://${hostname}:${port}`).pipe(Effect.provide(logging)))
}, (request) => handler(request))

const stop = async () => {
  await server.shutdown() // stops accepting, waits for in-flight requests
  await dispose()
  await runtime.dispose()
  Deno.exit(0)
}
Deno.addSignalListener("SIGTERM", stop)
Deno.addSignalListener("SIGINT", stop)
