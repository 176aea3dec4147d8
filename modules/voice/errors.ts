/** The voice errors of contract §7.5, as `ApiError`s rendered in the flat envelope of `/api/ai/*`. */
import { ApiError } from "../../schemas/errors.ts"
import type { SpeechFormat, VoiceProvider } from "./registry.ts"
import type { UpstreamError } from "./upstream.ts"

export const badRequest = (message: string, param?: string) =>
  ApiError.badRequest(message, { code: "bad_request", ...(param === undefined ? {} : { param }) })

export const providerNotConfigured = (provider: VoiceProvider) =>
  new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: "provider_not_configured",
    message: `No managed or BYOK key is configured for provider ${provider}`,
    details: { provider }
  })

export const byokRequired = (format: SpeechFormat) =>
  new ApiError({
    status: 402,
    type: "invalid_request_error",
    code: "byok_required",
    message: `model auto needs a BYOK key for a priced voice model that produces ${format}; none is configured`,
    param: "model"
  })

export const providerError = (error: UpstreamError) =>
  new ApiError({
    status: error.kind === "rejected" ? 400 : 502,
    type: "api_error",
    code: "provider_error",
    message: `${error.provider}: ${error.message}`,
    details: { provider: error.provider, upstream_status: error.status }
  })

export const rateLimited = (limit: number, retryAfter: number) =>
  new ApiError({
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    message: `More than ${limit} voice requests per minute for this project`,
    headers: { "retry-after": String(retryAfter) }
  })

