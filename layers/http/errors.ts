/**
 * The one place where failures become responses. Every failure of the API (typed `ApiError`s, schema decode
 * errors, malformed bodies, unknown routes, wrong methods, oversized bodies, defects) is turned into the envelope
 * of the surface the request hit (contract §7), with the request id. Nothing else writes an error body.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  Multipart
} from "@effect/platform"
import { Cause, Effect, FiberRef, Option } from "effect"
import { ApiError, type ApiErrorFields, errorBody, type Surface } from "../../schemas/errors.ts"
import { AppConfig } from "../config.ts"

/** The request id of the current request, set by the request middleware. */
export const CurrentRequestId = FiberRef.unsafeMake<string | null>(null)

/** When the current request arrived (`performance.now()`), for the gateway-overhead header. */
export const CurrentRequestStart = FiberRef.unsafeMake<number | null>(null)

/** Which envelope a path uses (§7): platform for `/v1` and OpenAI-compatible paths, and so on. */
export const surfaceOf = (path: string): Surface => {
  if (path.startsWith("/api/v1/web/") || path === "/api/v1/web") return "web"
  if (path.startsWith("/api/projects/") || path.startsWith("/api/auth/")) return "message"
  if (path.startsWith("/api/ai/") || path.startsWith("/api/models") || path.startsWith("/api/providers")) return "flat"
  return "platform"
}

export const renderError = (path: string, error: ApiErrorFields, requestId: string | null) =>
  HttpServerResponse.unsafeJson(errorBody(surfaceOf(path), error, requestId), {
    status: error.status,
    headers: error.headers ?? {}
  })

type RouteMatcher = { readonly method: string; readonly pattern: RegExp; readonly path: string }

/** Route patterns of the API, for 405 answers and for naming the route in access logs. */
export const routeMatchers = (api: HttpApi.HttpApi.Any): ReadonlyArray<RouteMatcher> => {
  const routes: Array<RouteMatcher> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const source = endpoint.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+")
      routes.push({ method: endpoint.method, path: endpoint.path, pattern: new RegExp(`^${source}/?$`) })
    }
  })
  return routes
}

const decodeMessage = (error: HttpApiError.HttpApiDecodeError) => {
  const first = error.issues[0]
  if (!first) return { message: error.message, param: undefined }
  const param = first.path.length > 0 ? first.path.map(String).join(".") : undefined
  return { message: param ? `${param}: ${first.message}` : first.message, param }
}

const tooLarge = (message: string): ApiErrorFields => ({
  status: 413,
  type: "invalid_request_error",
  code: "payload_too_large",
  message
})

/** Maps anything that can escape a handler to the fields of an error answer, or None to re-raise (interrupts). */
export const toErrorFields = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  routes: ReadonlyArray<RouteMatcher>
): Option.Option<ApiErrorFields> => {
  if (Cause.isInterruptedOnly(cause)) return Option.none()
  const failure = Cause.squash(cause)
  if (failure instanceof ApiError) return Option.some(failure)
  if (failure instanceof HttpApiError.HttpApiDecodeError) {
    const { message, param } = decodeMessage(failure)
    return Option.some({ status: 400, type: "invalid_request_error", code: "invalid_request", message, param })
  }
  if (HttpServerError.isServerError(failure)) {
    if (failure._tag === "RouteNotFound") {
      const path = new URL(request.url, "http://local").pathname
      const allowed = routes.filter((route) => route.pattern.test(path)).map((route) => route.method)
      return Option.some(
        allowed.length > 0
          ? {
            status: 405,
            type: "invalid_request_error",
            code: "method_not_allowed",
            message: `Method ${request.method} is not allowed on ${path}`,
            headers: { allow: [...new Set(allowed)].join(", ") }
          }
          : { status: 404, type: "not_found_error", code: "not_found", message: `No route for ${request.method} ${path}` }
      )
    }
    if (failure._tag === "RequestError") {
      const detail = String(failure.cause instanceof Error ? failure.cause.message : failure.cause ?? "")
      if (detail.includes("maxBytes exceeded")) return Option.some(tooLarge("Request body is too large"))
      return Option.some({
        status: 400,
        type: "invalid_request_error",
        code: "invalid_json",
        message: failure.cause instanceof SyntaxError
          ? `Request body is not valid JSON: ${failure.cause.message}`
          : "Request body could not be read"
      })
    }
  }
  if (failure instanceof Multipart.MultipartError) {
    switch (failure.reason) {
      case "FileTooLarge":
      case "FieldTooLarge":
      case "BodyTooLarge":
        return Option.some(tooLarge(`Multipart ${failure.reason === "FileTooLarge" ? "file" : "body"} is too large`))
      case "TooManyParts":
        return Option.some(tooLarge("Too many multipart parts"))
      default:
        return Option.some({
          status: 400,
          type: "invalid_request_error",
          code: "invalid_multipart",
          message: "Multipart body could not be parsed"
        })
    }
  }
  return Option.some({ status: 500, type: "api_error", code: "internal_error", message: "Internal server error" })
}

/** Paths whose bodies may exceed `MAX_BODY_BYTES` because they enforce their own upload limits. */
export const LARGE_BODY_PATHS: ReadonlySet<string> = new Set(["/api/ai/audio/transcriptions"])

/**
 * HttpApi-level middleware, wrapping the router so it sees typed failures before any encoding: enforces the
 * body limit (413 from `Content-Length` before reading, and while reading chunked bodies), then renders every
 * failure in its surface's envelope.
 */
export const ApiGuardLive = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    const config = yield* AppConfig
    const routes = routeMatchers(api)
    return (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = new URL(request.url, "http://local").pathname
        if (LARGE_BODY_PATHS.has(path)) return yield* app
        const declared = Number(request.headers["content-length"] ?? "0")
        if (declared > config.maxBodyBytes) {
          return yield* Effect.fail(new ApiError(tooLarge(`Request body is larger than ${config.maxBodyBytes} bytes`)))
        }
        return yield* HttpIncomingMessage.withMaxBodySize(app, Option.some(config.maxBodyBytes))
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            const fields = toErrorFields(cause, request, routes)
            // Only interruption (the client went away) is left unrendered.
            if (Option.isNone(fields)) return yield* Effect.interrupt
            if (fields.value.status >= 500) {
              yield* Effect.logError("request failed", Cause.pretty(cause))
            }
            const requestId = yield* FiberRef.get(CurrentRequestId)
            return renderError(new URL(request.url, "http://local").pathname, fields.value, requestId)
          })
        )
      )
  })
)
