/**
 * Runs a family adapter over HTTP: sends the request, bounds it with the target's timeout, turns error statuses
 * into `UpstreamError`s (capped body, Retry-After) and SSE bodies into deltas. Interrupting a call (or stopping
 * to consume its stream) aborts the upstream request.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Channel, Chunk, Clock, Effect, Either, Stream } from "effect"
import type { FamilyAdapter } from "./adapter.ts"
import { makeSseDecoder } from "./sse.ts"
import {
  type ChatDelta,
  type ChatRequest,
  type ChatResult,
  MAX_ERROR_BODY,
  type ProviderFamily,
  UpstreamError,
  type UpstreamTarget
} from "./types.ts"

const fromClientError = (family: ProviderFamily, error: HttpClientError.HttpClientError): UpstreamError => {
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
  if (error._tag === "RequestError" && error.reason !== "Transport") {
    return new UpstreamError({ kind: "request", family, status: 400, message: `invalid upstream request (${error.reason})${cause}` })
  }
  return new UpstreamError({ kind: "network", family, message: `${family} upstream connection failed${cause}` })
}

const timeoutError = (family: ProviderFamily, target: UpstreamTarget, what: string) => () =>
  new UpstreamError({ kind: "timeout", family, message: `${family} upstream sent no ${what} within ${target.timeoutMs} ms` })

/** `retry-after-ms` (OpenAI), then `Retry-After` in seconds or as an HTTP date. */
export const parseRetryAfter = (headers: Readonly<Record<string, string | undefined>>, nowMs: number): number | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms))
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value === "") return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** An error status → UpstreamError with the provider's message, a capped body and the retry delay. */
const failFromResponse = (adapter: FamilyAdapter, response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
    const info = adapter.readError(parseJson(text))
    const now = yield* Clock.currentTimeMillis
    const retryAfterMs = parseRetryAfter(response.headers, now) ?? info.retryAfterMs
    const detail = info.message ?? (text.length > 0 ? text.slice(0, 200) : "no body")
    return yield* new UpstreamError({
      kind: "http",
      family: adapter.family,
      status: response.status,
      body: text.slice(0, MAX_ERROR_BODY),
      code: info.code,
      message: `${adapter.family} upstream answered ${response.status}: ${detail}`,
      retryAfterMs
    })
  })

/**
 * Bytes → SSE events → deltas, in one pass per network chunk. An error event stops the stream right after the
 * deltas that preceded it (in the same chunk too); the body's end lets the mapper add usage or report a cut.
 */
const sseToDeltas = (
  adapter: FamilyAdapter,
  target: UpstreamTarget
): Channel.Channel<Chunk.Chunk<ChatDelta>, Chunk.Chunk<Uint8Array>, UpstreamError, UpstreamError, unknown, unknown> => {
  const sse = makeSseDecoder()
  const mapper = adapter.makeStreamMapper(target)
  const loop: Channel.Channel<Chunk.Chunk<ChatDelta>, Chunk.Chunk<Uint8Array>, UpstreamError, UpstreamError, unknown, unknown> =
    Channel.readWithCause({
      onInput: (chunk: Chunk.Chunk<Uint8Array>) => {
        const out: Array<ChatDelta> = []
        for (const bytes of chunk) {
          for (const event of sse.feed(bytes)) {
            const result = mapper.onEvent(event)
            if (result instanceof UpstreamError) {
              return Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), Channel.fail(result))
            }
            for (const delta of result) out.push(delta)
          }
        }
        return out.length > 0 ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), loop) : loop
      },
      onFailure: (cause) => Channel.failCause(cause),
      onDone: () => {
        const result = mapper.onEnd()
        return result instanceof UpstreamError ? Channel.fail(result) : Channel.write(Chunk.unsafeFromArray([...result]))
      }
    })
  return loop
}

/** A whole JSON answer → the normalised result. */
const readResult = (adapter: FamilyAdapter, target: UpstreamTarget, response: HttpClientResponse.HttpClientResponse) =>
  Effect.mapError(response.text, (error) => fromClientError(adapter.family, error)).pipe(
    Effect.flatMap((text) => {
      const json = parseJson(text)
      if (json === undefined) {
        return Effect.fail(
          new UpstreamError({
            kind: "decode",
            family: adapter.family,
            body: text.slice(0, MAX_ERROR_BODY),
            message: `${adapter.family} upstream answered with a body that is not JSON`
          })
        )
      }
      return adapter.decodeResult(json, target)
    })
  )

/** A whole result replayed as the deltas a stream would have given. */
const resultToDeltas = (result: ChatResult): Stream.Stream<ChatDelta> => {
  const deltas: Array<ChatDelta> = []
  if (result.content !== null && result.content !== "") deltas.push({ type: "text", text: result.content })
  result.toolCalls.forEach((call, index) =>
    deltas.push({ type: "tool_call", index, id: call.id, name: call.name, arguments: call.arguments })
  )
  deltas.push({ type: "finish", reason: result.finishReason }, { type: "usage", ...result.usage })
  return Stream.fromIterable(deltas)
}

export interface UpstreamRunner {
  readonly complete: (adapter: FamilyAdapter, target: UpstreamTarget, request: ChatRequest) => Effect.Effect<ChatResult, UpstreamError>
  readonly stream: (adapter: FamilyAdapter, target: UpstreamTarget, request: ChatRequest) => Stream.Stream<ChatDelta, UpstreamError>
}

export const makeRunner = (client: HttpClient.HttpClient): UpstreamRunner => {
  /** Sends and waits for a 2xx status; anything else becomes the upstream's error. */
  const send = (adapter: FamilyAdapter, target: UpstreamTarget, request: ChatRequest, stream: boolean) =>
    Effect.suspend(() => {
      const built = adapter.buildRequest(target, request, stream)
      if (Either.isLeft(built)) return Effect.fail(built.left)
      return client.execute(built.right).pipe(
        Effect.mapError((error) => fromClientError(adapter.family, error)),
        Effect.flatMap((response) =>
          response.status >= 200 && response.status < 300 ? Effect.succeed(response) : failFromResponse(adapter, response)
        )
      )
    })

  const complete = (adapter: FamilyAdapter, target: UpstreamTarget, request: ChatRequest) =>
    send(adapter, target, request, false).pipe(
      Effect.flatMap((response) => readResult(adapter, target, response)),
      Effect.timeoutFail({ duration: target.timeoutMs, onTimeout: timeoutError(adapter.family, target, "answer") })
    )

  const stream = (adapter: FamilyAdapter, target: UpstreamTarget, request: ChatRequest) =>
    Stream.unwrap(
      send(adapter, target, request, true).pipe(
        Effect.timeoutFail({ duration: target.timeoutMs, onTimeout: timeoutError(adapter.family, target, "response") }),
        Effect.map((response) =>
          // Some OpenAI-compatible servers ignore `stream: true` and answer one JSON body.
          (response.headers["content-type"] ?? "").includes("json")
            ? Stream.unwrap(
              readResult(adapter, target, response).pipe(
                Effect.timeoutFail({ duration: target.timeoutMs, onTimeout: timeoutError(adapter.family, target, "answer") }),
                Effect.map(resultToDeltas)
              )
            )
            : response.stream.pipe(
              Stream.mapError((error) => fromClientError(adapter.family, error)),
              Stream.timeoutFail(timeoutError(adapter.family, target, "stream data"), target.timeoutMs),
              Stream.pipeThroughChannel(Channel.suspend(() => sseToDeltas(adapter, target)))
            )
        )
      )
    )

  return { complete, stream }
}

/** Our HTTP client for upstreams: no trace headers leak to providers, no span per call on the hot path. */
export const upstreamClient = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  client.pipe(HttpClient.withTracerPropagation(false), HttpClient.withTracerDisabledWhen(() => true))
