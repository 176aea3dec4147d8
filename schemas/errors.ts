/**
 * Errors as the contract shows them (§7). Handlers fail with `ApiError`; the HTTP layer renders it in the
 * envelope of the surface the request hit (see `layers/http/errors.ts`). The schemas here describe each wire
 * envelope for OpenAPI.
 */
import { HttpApiSchema } from "@effect/platform"
import { Data, Schema } from "effect"

export interface ApiErrorFields {
  readonly status: number
  /** Machine-readable code, e.g. `invalid_request`, `not_found`, `unsafe_url`, `bad_request`. */
  readonly code: string
  /** The platform envelope's `error.type`, e.g. `invalid_request_error`. */
  readonly type: string
  readonly message: string
  readonly param?: string | undefined
  /** Extra structured detail (web envelope `details`, vision image index, ...). */
  readonly details?: Readonly<Record<string, unknown>> | undefined
  /** Extra response headers, e.g. `Retry-After` or `Allow`. */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

export class ApiError extends Data.TaggedError("ApiError")<ApiErrorFields> {
  static readonly badRequest = (message: string, options?: { code?: string; param?: string; details?: Record<string, unknown> }) =>
    new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: options?.code ?? "invalid_request",
      message,
      param: options?.param,
      details: options?.details
    })

  static readonly unauthorized = (message = "Missing or invalid credentials") =>
    new ApiError({ status: 401, type: "authentication_error", code: "unauthorized", message })

  static readonly forbidden = (message: string, code = "forbidden") =>
    new ApiError({ status: 403, type: "permission_error", code, message })

  static readonly notFound = (what: string, code = "not_found") =>
    new ApiError({ status: 404, type: "not_found_error", code, message: `${what} not found` })

  static readonly conflict = (message: string, code = "conflict") =>
    new ApiError({ status: 409, type: "conflict_error", code, message })

  static readonly internal = (message = "Internal server error") =>
    new ApiError({ status: 500, type: "api_error", code: "internal_error", message })
}

/** `{error:{type,code,message,request_id,param},status:"failed"}`: `/v1/…` and the OpenAI-compatible paths. */
export const PlatformErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    type: Schema.String,
    code: Schema.String,
    message: Schema.String,
    request_id: Schema.NullOr(Schema.String),
    param: Schema.NullOr(Schema.String)
  }),
  status: Schema.Literal("failed")
}).annotations({ identifier: "PlatformError" })

/** `{error: <message>}`: custom provider management (§7.2) and the dashboard auth paths. */
export const MessageErrorEnvelope = Schema.Struct({ error: Schema.String }).annotations({
  identifier: "MessageError"
})

/** `{error: <code>, message, details}`: web operations (§7.3). */
export const WebErrorEnvelope = Schema.Struct({
  error: Schema.String,
  message: Schema.String,
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "WebError" })

/**
 * The flat envelope of `/api/ai/…` (voice §7.5, vision §7.4, chat) and the public catalog:
 * `{error: <code>, message, request_id, param?, ...details}`.
 */
export const FlatErrorEnvelope = Schema.Struct({
  error: Schema.String,
  message: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  param: Schema.optional(Schema.String)
}).annotations({ identifier: "FlatError" })

export type Surface = "platform" | "message" | "web" | "flat"

/** The wire body of `error` on `surface`; the one place where envelopes are built. */
export const errorBody = (surface: Surface, error: ApiErrorFields, requestId: string | null): unknown => {
  switch (surface) {
    case "platform":
      return {
        error: {
          type: error.type,
          code: error.code,
          message: error.message,
          request_id: requestId,
          param: error.param ?? null
        },
        status: "failed"
      }
    case "message":
      return { error: error.message }
    case "web":
      return { error: error.code, message: error.message, details: error.details ?? {} }
    case "flat":
      return {
        ...error.details,
        error: error.code,
        message: error.message,
        request_id: requestId,
        ...(error.param === undefined ? {} : { param: error.param })
      }
  }
}

const envelopes = {
  platform: PlatformErrorEnvelope,
  message: MessageErrorEnvelope,
  web: WebErrorEnvelope,
  flat: FlatErrorEnvelope
} as const

const ApiErrorType = Schema.declare((u: unknown): u is ApiError => u instanceof ApiError, {
  identifier: "ApiError"
})

/** Declares, for OpenAPI and the typed handlers, that an endpoint can answer `status` in `surface`'s envelope. */
export const errorResponse = (surface: Surface, status: number) =>
  Schema.transform(envelopes[surface], ApiErrorType, {
    strict: false,
    decode: (wire) => ApiError.internal(`unexpected error body ${JSON.stringify(wire)}`),
    encode: (error) => errorBody(surface, error, null)
  }).annotations(HttpApiSchema.annotations({ status }))
