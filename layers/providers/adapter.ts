/**
 * What one provider family supplies (Portkey-style: one folder per family with request, response and stream
 * mappers). `http.ts` runs any of them: sending, timeouts, error bodies and SSE framing are done once there.
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { type Either, ParseResult } from "effect"
import type { SseMessage } from "./sse.ts"
import {
  type ChatDelta,
  type ChatRequest,
  type ChatResult,
  MAX_ERROR_BODY,
  type ProviderFamily,
  UpstreamError,
  type UpstreamTarget
} from "./types.ts"

/** Turns one upstream SSE stream into deltas; a fresh one per call (it keeps the stream's state). */
export interface StreamMapper {
  /** Deltas for one upstream event, or the error the event reports. */
  readonly onEvent: (event: SseMessage) => ReadonlyArray<ChatDelta> | UpstreamError
  /** Called when the upstream body ends: the last deltas (usage), or an error when the stream was cut short. */
  readonly onEnd: () => ReadonlyArray<ChatDelta> | UpstreamError
}

/** What a provider's error body says, in its own terms. */
export interface ProviderErrorInfo {
  readonly message?: string | undefined
  readonly code?: string | undefined
  readonly retryAfterMs?: number | undefined
}

export interface FamilyAdapter {
  readonly family: ProviderFamily
  /** The upstream HTTP request, or an error when the request cannot be expressed for this family. */
  readonly buildRequest: (
    target: UpstreamTarget,
    request: ChatRequest,
    stream: boolean
  ) => Either.Either<HttpClientRequest.HttpClientRequest, UpstreamError>
  /** A whole JSON answer → the normalised result. */
  readonly decodeResult: (body: unknown, target: UpstreamTarget) => Either.Either<ChatResult, UpstreamError>
  readonly makeStreamMapper: (target: UpstreamTarget) => StreamMapper
  /** Reads the provider's error body (already parsed JSON, or undefined when it was not JSON). */
  readonly readError: (body: unknown) => ProviderErrorInfo
}

/** The upstream's JSON did not match its wire format. */
export const decodeError = (family: ProviderFamily, body: unknown, error: ParseResult.ParseError): UpstreamError =>
  new UpstreamError({
    kind: "decode",
    family,
    body: JSON.stringify(body).slice(0, MAX_ERROR_BODY),
    message: `${family} upstream answered with an unexpected body: ${
      ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 300)
    }`
  })

/** A stream event whose data is not JSON. */
export const notJson = (family: ProviderFamily, data: string): UpstreamError =>
  new UpstreamError({
    kind: "decode",
    family,
    body: data.slice(0, MAX_ERROR_BODY),
    message: `${family} upstream sent a stream event that is not JSON`
  })

/** The body ended without the stream's end marker (connection cut): the answer is incomplete. */
export const streamEndedEarly = (family: ProviderFamily): UpstreamError =>
  new UpstreamError({ kind: "network", family, message: `${family} upstream stream ended before it finished` })

/** Parses an event's JSON data; undefined when it is not JSON. */
export const parseEventJson = (data: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    return undefined
  }
}
