/**
 * The outermost HTTP middleware: assigns the request id (echoed as `X-Request-Id` on every response) and writes
 * one structured access-log line per request.
 * Logs carry method, route pattern, path, status and duration; never headers, bodies or query strings.
 */
import { HttpApp, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Exit, FiberRef } from "effect"
import * as Crypto from "node:crypto"
import { CurrentRequestId, CurrentRequestStart, routeMatchers } from "./errors.ts"
import type { GatewayApi } from "./api.ts"

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

const newRequestId = () => `req_${Crypto.randomBytes(12).toString("hex")}`

/**
 * Responses are written inside the app (before an outer middleware sees them), so the header is added by a
 * pre-response handler; the body limit and error rendering live in the API-level `ApiGuardLive`.
 */
export const requestMiddleware = (api: typeof GatewayApi) => {
  const routes = routeMatchers(api)
  const routeOf = (method: string, path: string) =>
    routes.find((route) => route.method === method && route.pattern.test(path))?.path ?? "unmatched"
  return HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const started = performance.now()
      const incoming = request.headers["x-request-id"]
      const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : newRequestId()
      yield* HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
      )
      const path = new URL(request.url, "http://local").pathname
      const exit = yield* app.pipe(
        Effect.locally(CurrentRequestId, requestId),
        Effect.locally(CurrentRequestStart, started),
        Effect.exit
      )
      yield* Effect.logInfo("request").pipe(
        Effect.annotateLogs({
          request_id: requestId,
          method: request.method,
          route: routeOf(request.method, path),
          path,
          status: Exit.isSuccess(exit) ? exit.value.status : 499,
          duration_ms: Math.round((performance.now() - started) * 1000) / 1000
        })
      )
      return yield* exit
    })
  )
}

/** The request id as seen by handlers that stream and must name it in headers (voice, SSE). */
export const currentRequestId = Effect.map(FiberRef.get(CurrentRequestId), (id) => id ?? newRequestId())

