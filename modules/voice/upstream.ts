/**
 * What every voice adapter shares: the resolved upstream (key and base URL), the typed upstream failure, and one
 * fetch wrapper that turns a non-2xx answer into that failure with the provider's own message.
 */
import { Data, Effect, Redacted, Stream } from "effect"
import type { VoiceProvider } from "./registry.ts"

export interface Upstream {
  readonly provider: VoiceProvider
  readonly apiKey: Redacted.Redacted
  readonly baseUrl: string
}

/**
 * `rejected`: the provider refused the input (4xx other than auth and rate limits) → 400 `provider_error`;
 * `failed`: anything else (5xx, auth, rate limit, network, timeout, unreadable answer) → 502 `provider_error`.
 */
export class UpstreamError extends Data.TaggedError("UpstreamError")<{
  readonly provider: VoiceProvider
  readonly kind: "rejected" | "failed"
  readonly status: number | null
  readonly message: string
}> {}

const stringAt = (value: unknown, ...path: ReadonlyArray<string | number>): string | undefined => {
  let current: unknown = value
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return typeof current === "string" && current.length > 0 ? current : undefined
}

/** The provider's error message from any of the six families' error bodies (providers.md). */
export const upstreamMessage = (text: string): string => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return text.trim().slice(0, 300) || "no error body"
  }
  return (
    stringAt(body, "error", "message") ?? // OpenAI, Spitch
    stringAt(body, "error") ?? // AssemblyAI
    stringAt(body, "err_msg") ?? // Deepgram
    stringAt(body, "detail", "message") ?? // ElevenLabs 400/401
    stringAt(body, "detail", 0, "msg") ?? // ElevenLabs 422
    stringAt(body, "message") ?? // Deepgram, Cartesia
    stringAt(body, "title") ??
    text.slice(0, 300)
  )
}

const classify = (status: number): UpstreamError["kind"] =>
  status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429 ? "rejected" : "failed"

/** One upstream HTTP call; resolves with the 2xx response (body unread), fails with `UpstreamError`. */
export const send = (provider: VoiceProvider, url: string, init: RequestInit) =>
  Effect.tryPromise({
    try: (signal) => fetch(url, { ...init, signal }),
    catch: (cause) =>
      new UpstreamError({
        provider,
        kind: "failed",
        status: null,
        message: `could not reach ${provider}: ${cause instanceof Error ? cause.message : String(cause)}`
      })
  }).pipe(
    Effect.flatMap((response) =>
      response.ok
        ? Effect.succeed(response)
        : Effect.promise(() => response.text().catch(() => "")).pipe(
          Effect.flatMap((text) =>
            Effect.fail(
              new UpstreamError({
                provider,
                kind: classify(response.status),
                status: response.status,
                message: upstreamMessage(text)
              })
            )
          )
        )
    )
  )

/** The 2xx JSON answer of an upstream call. */
export const sendJson = (provider: VoiceProvider, url: string, init: RequestInit) =>
  send(provider, url, init).pipe(
    Effect.flatMap((response) =>
      Effect.tryPromise({
        try: () => response.json() as Promise<unknown>,
        catch: () => new UpstreamError({ provider, kind: "failed", status: response.status, message: "unreadable JSON answer" })
      })
    )
  )

/** The body of a 2xx audio answer as a stream of chunks, as they arrive. */
export const bodyStream = (provider: VoiceProvider, response: Response): Stream.Stream<Uint8Array, UpstreamError> =>
  response.body === null
    ? Stream.empty
    : Stream.fromReadableStream({
      evaluate: () => response.body ?? new ReadableStream<Uint8Array>(),
      onError: (cause) =>
        new UpstreamError({
          provider,
          kind: "failed",
          status: response.status,
          message: `${provider} audio stream broke: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    })

export const bearer = (upstream: Upstream) => `Bearer ${Redacted.value(upstream.apiKey)}`
export const secret = (upstream: Upstream) => Redacted.value(upstream.apiKey)

/** Numbers and strings out of a provider JSON answer, without trusting its shape. */
export const field = {
  record: (value: unknown): Record<string, unknown> =>
    value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {},
  array: (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : []),
  number: (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined),
  string: (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
}
