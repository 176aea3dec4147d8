/**
 * The chat gateway: the one way the service talks to a language model (chat endpoints, sessions, vision).
 *
 * A call resolves its route (`ChatRouter`), holds credit on credit-gated projects (`Billing.authorize`), calls the
 * upstream through `ProviderAdapters`, retries 429/5xx/timeouts/network errors with backoff while nothing has
 * reached the client yet, then tries the optional `fallbacks` in order. When it ends — completed, failed or
 * cancelled — it settles the hold to the real cost and records a usage row (batched, off the request path).
 */
import { Cause, Chunk, Duration, Effect, Exit, Option, Ref, Scope, Stream } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { ProviderAdapters } from "../../layers/providers/Service.ts"
import type { ChatDelta, ChatRequest, ChatResult, Usage } from "../../layers/providers/types.ts"
import { UpstreamError } from "../../layers/providers/types.ts"
import { ApiError } from "../../schemas/errors.ts"
import { costOf, type Cost, providerCost } from "../usage/cost.ts"
import { Billing, type Hold } from "../usage/Service.ts"
import { type Route, ChatRouter } from "./Router.ts"

export interface CallContext {
  readonly projectId: string
  readonly tenantId?: string | null
  readonly agentId?: string | null
  readonly sessionId?: string | null
  readonly requestId?: string | null
  /** Usage row kind: `chat` (default), `vision`, `session`. */
  readonly kind?: string
}

export interface RouteInfo {
  readonly model: string
  readonly provider: string
  readonly keySource: Route["keySource"]
  readonly connectionId: string | null
  readonly pricingStatus: Route["pricingStatus"]
}

export interface Timings {
  /** From the upstream request to its first delta (streams) or whole answer. */
  readonly ttftMs: number
  /** When the upstream call started, `performance.now()` clock. */
  readonly upstreamStartedAt: number
}

export interface Completion {
  readonly result: ChatResult
  readonly route: RouteInfo
  readonly cost: Cost
  readonly timings: Timings
}

/** The last element of a gateway stream: what the call used and cost. */
export interface StreamSummary {
  readonly type: "summary"
  readonly usage: Usage
  readonly cost: Cost
  readonly route: RouteInfo
  readonly ttftMs: number
}

export type GatewayDelta = ChatDelta | StreamSummary

export interface StreamedChat {
  readonly route: RouteInfo
  readonly timings: Timings
  /** Every delta (the first one already received), then one `summary`. Ending it early aborts the upstream. */
  readonly deltas: Stream.Stream<GatewayDelta, UpstreamError>
}

export interface CallOptions {
  /** Models to try, in order, when the requested one fails upstream. */
  readonly fallbacks?: ReadonlyArray<string> | undefined
}

const routeInfo = (route: Route): RouteInfo => ({
  model: route.model,
  provider: route.provider,
  keySource: route.keySource,
  connectionId: route.connectionId,
  pricingStatus: route.pricingStatus
})

const textOf = (request: ChatRequest) =>
  request.messages.map((message) => {
    const content = message.content
    if (typeof content === "string") return content
    if (content === undefined || content === null) return ""
    return content.map((part) => ("text" in part ? part.text : "refusal" in part ? part.refusal : "")).join(" ")
  }).join("\n")

/** A generous prompt-token estimate (1 token per 3 characters) for credit holds and cancelled calls. */
const estimatePromptTokens = (request: ChatRequest) => Math.ceil(textOf(request).length / 3) + 16

const maxOutputTokens = (request: ChatRequest) => request.max_completion_tokens ?? request.max_tokens ?? 4096

/** Maps an upstream failure to the gateway's answer: 400 when the upstream rejected the request, else 502. */
export const upstreamFailure = (error: UpstreamError): ApiError => {
  const detail = error.body ? `: ${error.body.slice(0, 500)}` : ""
  if (error.kind === "request") {
    return ApiError.badRequest(error.message, { code: "unsupported_request" })
  }
  if (error.kind === "http" && error.status !== undefined && error.status >= 400 && error.status < 500 &&
    ![401, 403, 408, 429].includes(error.status)) {
    return new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "upstream_rejected",
      message: `The ${error.family} upstream rejected the request (${error.status})${detail}`
    })
  }
  return new ApiError({
    status: 502,
    type: "api_error",
    code: error.kind === "timeout" ? "upstream_timeout" : "upstream_error",
    message: `The ${error.family} upstream failed: ${error.message}${error.status ? ` (${error.status})` : ""}`
  })
}

/** Fallbacks are tried when the upstream failed in a way another model may not: not on rejected requests. */
const worthFallingBack = (error: UpstreamError) =>
  error.retryable || (error.kind === "http" && (error.status === 401 || error.status === 403 || error.status === 404))

export class ChatGateway extends Effect.Service<ChatGateway>()("ChatGateway", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const router = yield* ChatRouter
    const adapters = yield* ProviderAdapters
    const billing = yield* Billing

    /** Retries a retryable upstream failure with doubling delays, honouring Retry-After (capped at 10 s). */
    const withRetries = <A>(attempt: Effect.Effect<A, UpstreamError>): Effect.Effect<A, UpstreamError> => {
      const loop = (n: number): Effect.Effect<A, UpstreamError> =>
        attempt.pipe(
          Effect.catchIf(
            (error) => error.retryable && n < config.upstreamRetries,
            (error) => {
              const delay = Math.min(error.retryAfterMs ?? config.upstreamRetryBaseMs * 2 ** n, 10_000)
              return Effect.sleep(Duration.millis(delay)).pipe(Effect.zipRight(loop(n + 1)))
            }
          )
        )
      return loop(0)
    }

    const prepare = (ctx: CallContext, model: string, request: ChatRequest) =>
      Effect.gen(function*() {
        const route = yield* router.resolve(ctx.projectId, model)
        const settings = yield* billing.policy(ctx.projectId)
        const promptEstimate = estimatePromptTokens(request)
        const estimate = providerCost(route.prices, { promptTokens: promptEstimate, completionTokens: maxOutputTokens(request) })
        const hold = yield* billing.authorize(ctx.projectId, {
          model,
          estimateUsd: estimate === null ? null : estimate * (1 + settings.markupPercentage / 100),
          keySource: route.keySource
        })
        return { route, hold, markup: settings.markupPercentage, promptEstimate }
      })

    const costFor = (route: Route, usage: Usage, markup: number) =>
      costOf({
        prices: route.prices,
        use: { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, cachedTokens: usage.cachedTokens },
        keySource: route.keySource,
        markupPercentage: markup
      })

    const account = (
      ctx: CallContext,
      prepared: { readonly route: Route; readonly hold: Hold; readonly markup: number },
      outcome: { readonly usage: Usage; readonly status: "succeeded" | "failed" | "cancelled"; readonly latencyMs: number; readonly ttftMs: number | null }
    ) =>
      Effect.gen(function*() {
        const cost = costFor(prepared.route, outcome.usage, prepared.markup)
        yield* billing.settle(prepared.hold, cost, prepared.route.keySource)
        yield* billing.record({
          projectId: ctx.projectId,
          tenantId: ctx.tenantId ?? null,
          agentId: ctx.agentId ?? null,
          sessionId: ctx.sessionId ?? null,
          requestId: ctx.requestId ?? null,
          kind: ctx.kind ?? "chat",
          model: prepared.route.target.model,
          provider: prepared.route.provider,
          keySource: prepared.route.keySource,
          promptTokens: outcome.usage.promptTokens,
          completionTokens: outcome.usage.completionTokens,
          cachedTokens: outcome.usage.cachedTokens,
          cost,
          pricingStatus: prepared.route.pricingStatus,
          latencyMs: outcome.latencyMs,
          ttftMs: outcome.ttftMs,
          status: outcome.status
        })
        return cost
      })

    const models = (request: ChatRequest, options?: CallOptions) => [request.model, ...(options?.fallbacks ?? [])]

    /** Runs `attempt` for the requested model, then each fallback, while failures are worth another model. */
    const overModels = <A>(
      request: ChatRequest,
      options: CallOptions | undefined,
      attempt: (model: string) => Effect.Effect<A, ApiError | UpstreamError>
    ): Effect.Effect<A, ApiError> => {
      const candidates = models(request, options)
      const loop = (index: number): Effect.Effect<A, ApiError> =>
        attempt(candidates[index]!).pipe(
          Effect.catchAll((error) => {
            const more = index + 1 < candidates.length
            if (error instanceof UpstreamError) {
              return more && worthFallingBack(error) ? loop(index + 1) : Effect.fail(upstreamFailure(error))
            }
            // A fallback that cannot be routed does not hide the first model's error.
            return more && (error.code === "provider_not_configured" || error.code === "model_not_found")
              ? loop(index + 1)
              : Effect.fail(error)
          })
        )
      return loop(0)
    }

    const complete = (ctx: CallContext, request: ChatRequest, options?: CallOptions): Effect.Effect<Completion, ApiError> =>
      overModels(request, options, (model) =>
        Effect.gen(function*() {
          const prepared = yield* prepare(ctx, model, request)
          const startedAt = performance.now()
          const exit = yield* withRetries(adapters.complete(prepared.route.target, { ...request, model: prepared.route.target.model })).pipe(
            Effect.exit
          )
          const latencyMs = performance.now() - startedAt
          if (Exit.isSuccess(exit)) {
            const result = exit.value
            const cost = yield* account(ctx, prepared, { usage: result.usage, status: "succeeded", latencyMs, ttftMs: latencyMs })
            return {
              result,
              route: routeInfo(prepared.route),
              cost,
              timings: { ttftMs: latencyMs, upstreamStartedAt: startedAt }
            } satisfies Completion
          }
          const cancelled = Exit.isInterrupted(exit)
          yield* account(ctx, prepared, {
            usage: { promptTokens: cancelled ? prepared.promptEstimate : 0, completionTokens: 0, cachedTokens: 0 },
            status: cancelled ? "cancelled" : "failed",
            latencyMs,
            ttftMs: null
          })
          return yield* Effect.failCause(exit.cause)
        }))

    /**
     * Starts a streamed call and waits for its first delta, so failures before the first byte can still be
     * retried, fall back, or answer with a proper status. The returned stream owns the upstream connection.
     */
    const stream = (ctx: CallContext, request: ChatRequest, options?: CallOptions): Effect.Effect<StreamedChat, ApiError> =>
      overModels(request, options, (model) =>
        Effect.gen(function*() {
          const prepared = yield* prepare(ctx, model, request)
          const upstreamRequest = { ...request, model: prepared.route.target.model }
          const startedAt = performance.now()
          const opened = yield* withRetries(
            Effect.gen(function*() {
              const scope = yield* Scope.make()
              const pull = yield* Stream.toPull(adapters.stream(prepared.route.target, upstreamRequest)).pipe(
                Scope.extend(scope)
              )
              const first = yield* pull.pipe(
                Effect.catchAll((error) => Option.isSome(error) ? Effect.fail(error.value) : Effect.succeed(Chunk.empty<ChatDelta>())),
                Effect.tapErrorCause(() => Scope.close(scope, Exit.void))
              )
              return { scope, pull, first }
            })
          ).pipe(
            Effect.tapErrorCause((cause) =>
              account(ctx, prepared, {
                usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 },
                status: "failed",
                latencyMs: performance.now() - startedAt,
                ttftMs: null
              }).pipe(Effect.when(() => !Cause.isInterruptedOnly(cause)))
            )
          )
          const ttftMs = performance.now() - startedAt
          const route = routeInfo(prepared.route)
          const produced = yield* Ref.make({ text: 0, usage: Option.none<Usage>(), status: "cancelled" as "succeeded" | "failed" | "cancelled" })

          const observe = (delta: ChatDelta) =>
            Ref.update(produced, (state) => {
              switch (delta.type) {
                case "text":
                  return { ...state, text: state.text + delta.text.length }
                case "tool_call":
                  return { ...state, text: state.text + delta.arguments.length + (delta.name?.length ?? 0) }
                case "usage":
                  return { ...state, usage: Option.some({ promptTokens: delta.promptTokens, completionTokens: delta.completionTokens, cachedTokens: delta.cachedTokens }) }
                case "finish":
                  return state
              }
            })

          const usageOf = (state: { readonly text: number; readonly usage: Option.Option<Usage> }): Usage =>
            Option.getOrElse(state.usage, () => ({
              // Billed for what was produced when the upstream never reported usage (e.g. a cancelled stream).
              promptTokens: prepared.promptEstimate,
              completionTokens: Math.ceil(state.text / 4),
              cachedTokens: 0
            }))

          const finalize = Effect.gen(function*() {
            const state = yield* Ref.get(produced)
            yield* account(ctx, prepared, {
              usage: usageOf(state),
              status: state.status,
              latencyMs: performance.now() - startedAt,
              ttftMs
            })
            yield* Scope.close(opened.scope, Exit.void)
          })

          const summary = Effect.gen(function*() {
            yield* Ref.update(produced, (state) => ({ ...state, status: "succeeded" as const }))
            const state = yield* Ref.get(produced)
            const usage = usageOf(state)
            return { type: "summary", usage, cost: costFor(prepared.route, usage, prepared.markup), route, ttftMs } satisfies StreamSummary
          })

          const rest = Stream.repeatEffectChunkOption(opened.pull)
          const deltas: Stream.Stream<GatewayDelta, UpstreamError> = Stream.fromChunk(opened.first).pipe(
            Stream.concat(rest),
            Stream.tap(observe),
            Stream.tapError(() => Ref.update(produced, (state) => ({ ...state, status: "failed" as const }))),
            Stream.concat(Stream.fromEffect(summary)),
            Stream.ensuring(finalize)
          )
          return { route, timings: { ttftMs, upstreamStartedAt: startedAt }, deltas } satisfies StreamedChat
        }))

    return { complete, stream, router }
  })
}) {}
