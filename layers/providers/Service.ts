/**
 * ProviderAdapters: the one way the service talks to a language model. `complete` returns a whole answer,
 * `stream` a stream of normalised deltas; both dispatch on `target.family` to the family's adapter folder.
 * Interrupting `complete`, or ending consumption of `stream` early, aborts the upstream HTTP request.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { Effect, Layer, Stream } from "effect"
import type { FamilyAdapter } from "./adapter.ts"
import { AnthropicAdapter } from "./anthropic/index.ts"
import { GoogleAdapter } from "./google/index.ts"
import { makeRunner, upstreamClient } from "./http.ts"
import { OpenAIAdapter } from "./openai/index.ts"
import type { ChatDelta, ChatRequest, ChatResult, ProviderFamily, UpstreamError, UpstreamTarget } from "./types.ts"

const ADAPTERS: Readonly<Record<ProviderFamily, FamilyAdapter>> = {
  openai: OpenAIAdapter,
  anthropic: AnthropicAdapter,
  google: GoogleAdapter
}

export class ProviderAdapters extends Effect.Service<ProviderAdapters>()("ProviderAdapters", {
  effect: Effect.gen(function*() {
    const runner = makeRunner(upstreamClient(yield* HttpClient.HttpClient))
    return {
      /** One whole answer. Fails with `timeout` when it takes longer than `target.timeoutMs`. */
      complete: (target: UpstreamTarget, request: ChatRequest): Effect.Effect<ChatResult, UpstreamError> =>
        runner.complete(ADAPTERS[target.family], target, request),
      /**
       * The answer as deltas (text and tool-call pieces, then one `finish`, then `usage` when reported). Fails
       * with `timeout` when the response headers, or any next chunk, take longer than `target.timeoutMs`.
       */
      stream: (target: UpstreamTarget, request: ChatRequest): Stream.Stream<ChatDelta, UpstreamError> =>
        runner.stream(ADAPTERS[target.family], target, request)
    } as const
  })
}) {}

/**
 * Connections to upstreams stay open between calls (an undici pool per origin, no connection limit). Idle
 * sockets close after 10 s unless the server's `Keep-Alive: timeout=` hint says sooner.
 */
export const UpstreamHttpClientLive: Layer.Layer<HttpClient.HttpClient> = NodeHttpClient.layerUndiciWithoutDispatcher.pipe(
  Layer.provide(
    Layer.scoped(
      NodeHttpClient.Dispatcher,
      Effect.acquireRelease(
        Effect.sync(() => new Undici.Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 600_000 })),
        (agent) => Effect.promise(() => agent.destroy())
      )
    )
  )
)

/** ProviderAdapters with its own keep-alive HTTP client. */
export const ProviderAdaptersLive: Layer.Layer<ProviderAdapters> = ProviderAdapters.Default.pipe(
  Layer.provide(UpstreamHttpClientLive)
)
