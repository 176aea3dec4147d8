/**
 * Vision: analyze, describe, OCR and classify images (contract §4.7), and the routing of image content sent to
 * the chat endpoints. The model is called only through the chat gateway (`ChatGateway`), which does routing,
 * retries, billing and usage rows (kind `vision`); this service chooses a vision-capable model, loads and checks
 * the images against that provider's limits, and shapes the answer.
 */
import { Effect, identity, Option, Stream } from "effect"
import { AppConfig } from "../../layers/config.ts"
import type { ChatMessage, ChatRequest, ContentPart, Usage } from "../../layers/providers/types.ts"
import type { ApiError } from "../../schemas/errors.ts"
import type { CatalogModel } from "../catalog/Model.ts"
import { Catalog } from "../catalog/Service.ts"
import { type CallContext, ChatGateway, type RouteInfo, upstreamFailure } from "../chat/Service.ts"
import type { Cost } from "../usage/cost.ts"
import { loadImages, type PreparedImage } from "./images.ts"
import { type ImageRef, sourceOfUrl, type VisionInput } from "./input.ts"
import { answerFields, type Preset, promptFor, wantsJson } from "./presets.ts"

/**
 * The vision model preferred per provider when a chosen model lacks vision; otherwise the cheapest priced
 * vision chat model of that provider, else `VISION_DEFAULT_MODEL`.
 */
export const PREFERRED_VISION_MODELS: Readonly<Record<string, string>> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-sonnet-4-5",
  google: "gemini-2.5-flash"
}

export interface ModelChoice {
  /** The model that will be called. */
  readonly model: string
  /** The model the caller asked for, when it was replaced because it lacks vision. */
  readonly upgradedFrom: string | null
}

export interface VisionAnswer {
  readonly route: RouteInfo
  readonly upgradedFrom: string | null
  /** The JSON body: the preset's answer field(s), model, provider, usage, cost. */
  readonly body: Record<string, unknown>
}

export type VisionEvent =
  | { readonly type: "delta"; readonly text: string }
  | { readonly type: "summary"; readonly body: Record<string, unknown> }

export interface VisionStream {
  readonly route: RouteInfo
  readonly upgradedFrom: string | null
  /** Text deltas, then one summary; an upstream failure after the first byte ends it with an `ApiError`. */
  readonly events: Stream.Stream<VisionEvent, ApiError>
}

export interface PreparedChat {
  readonly request: ChatRequest
  /** `vision` when the request carried images (usage rows are recorded under it), else `chat`. */
  readonly kind: "chat" | "vision"
  readonly upgradedFrom: string | null
}

const usageOut = (usage: Usage) => ({
  promptTokens: usage.promptTokens,
  completionTokens: usage.completionTokens,
  totalTokens: usage.promptTokens + usage.completionTokens
})

const costOut = (cost: Cost) => ({
  providerCostUsd: cost.providerCostUsd,
  serviceChargeUsd: cost.serviceChargeUsd,
  markupPercentage: cost.markupPercentage
})

const isVisionChatModel = (model: CatalogModel) =>
  model.capabilities.vision && model.status === "active" && model.types.includes("chat") &&
  model.type !== "image" && model.type !== "tts" && model.type !== "stt"

/** Image parts of a chat request's user messages, in order, with the field that holds each. */
const imagePartsOf = (messages: ReadonlyArray<ChatMessage>) =>
  messages.flatMap((message, m) =>
    message.role === "user" && typeof message.content !== "string"
      ? message.content.flatMap((part, p) => (part.type === "image_url" ? [{ m, p, part }] : []))
      : []
  )

export class Vision extends Effect.Service<Vision>()("Vision", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const gateway = yield* ChatGateway
    const catalog = yield* Catalog

    /** Keeps a model with vision support (or one the catalog does not know: custom providers); else upgrades. */
    const visionModelFor = (requested: string): ModelChoice => {
      const found = catalog.findModel(requested)
      if (Option.isNone(found) || found.value.capabilities.vision) return { model: requested, upgradedFrom: null }
      const provider = found.value.provider
      const candidates = catalog.models.filter((m) => m.provider === provider && isVisionChatModel(m))
      const preferred = PREFERRED_VISION_MODELS[provider]
      const chosen = candidates.find((m) => m.id === preferred) ??
        [...candidates]
          .filter((m) => m.pricing.input_per_million !== null)
          .sort((a, b) => (a.pricing.input_per_million ?? 0) - (b.pricing.input_per_million ?? 0) || a.id.localeCompare(b.id))[0]
      return { model: chosen?.id ?? config.visionDefaultModel, upgradedFrom: requested }
    }

    /** Resolves the route of `model` for its provider's limits, then loads and checks the images. */
    const loadFor = (projectId: string, model: string, refs: ReadonlyArray<ImageRef>) =>
      Effect.gen(function*() {
        const route = yield* gateway.router.resolve(projectId, model)
        return yield* loadImages(refs, {
          family: route.target.family,
          provider: route.provider,
          fetchTimeoutMs: config.visionFetchTimeoutMs,
          allowLoopback: config.safeFetchAllowLoopback
        })
      })

    const chatRequestOf = (preset: Preset, input: VisionInput, model: string, images: ReadonlyArray<PreparedImage>): ChatRequest => ({
      model,
      messages: [{
        role: "user",
        content: [
          { type: "text", text: promptFor(preset, input) },
          ...images.map((image): ContentPart => ({
            type: "image_url",
            image_url: input.detail === undefined ? { url: image.dataUrl } : { url: image.dataUrl, detail: input.detail }
          }))
        ]
      }],
      ...(input.maxTokens !== undefined ? { max_tokens: input.maxTokens } : {}),
      ...(wantsJson(preset, input.responseFormat) ? { response_format: { type: "json_object" as const } } : {})
    })

    const prepare = (ctx: CallContext, preset: Preset, input: VisionInput) =>
      Effect.gen(function*() {
        const choice = visionModelFor(input.model ?? config.visionDefaultModel)
        const images = yield* loadFor(ctx.projectId, choice.model, input.images)
        yield* Effect.logDebug("vision request").pipe(
          Effect.annotateLogs({ preset, model: choice.model, upgradedFrom: choice.upgradedFrom, images: images.length })
        )
        return { choice, request: chatRequestOf(preset, input, choice.model, images) }
      })

    const answerBody = (preset: Preset, text: string, route: RouteInfo, usage: Usage, cost: Cost) => ({
      ...answerFields(preset, text),
      model: route.model,
      provider: route.provider,
      usage: usageOut(usage),
      cost: costOut(cost)
    })

    /** One whole answer. */
    const analyze = (ctx: CallContext, preset: Preset, input: VisionInput): Effect.Effect<VisionAnswer, ApiError> =>
      Effect.gen(function*() {
        const { choice, request } = yield* prepare(ctx, preset, input)
        const completion = yield* gateway.complete({ ...ctx, kind: "vision" }, request)
        return {
          route: completion.route,
          upgradedFrom: choice.upgradedFrom,
          body: answerBody(preset, completion.result.content ?? "", completion.route, completion.result.usage, completion.cost)
        }
      })

    /** A streamed answer: deltas as the upstream produces them, then the summary with usage and cost. */
    const stream = (ctx: CallContext, preset: Preset, input: VisionInput): Effect.Effect<VisionStream, ApiError> =>
      Effect.gen(function*() {
        const { choice, request } = yield* prepare(ctx, preset, input)
        const streamed = yield* gateway.stream({ ...ctx, kind: "vision" }, { ...request, stream: true })
        const events: Stream.Stream<VisionEvent, ApiError> = streamed.deltas.pipe(
          Stream.mapAccum("", (text, delta): readonly [string, Option.Option<VisionEvent>] => {
            switch (delta.type) {
              case "text":
                return [text + delta.text, delta.text.length > 0 ? Option.some({ type: "delta", text: delta.text }) : Option.none()]
              case "summary":
                return [text, Option.some({ type: "summary", body: answerBody(preset, text, delta.route, delta.usage, delta.cost) })]
              default:
                return [text, Option.none()]
            }
          }),
          Stream.filterMap(identity),
          Stream.mapError(upstreamFailure)
        )
        return { route: streamed.route, upgradedFrom: choice.upgradedFrom, events }
      })

    /**
     * Routes a chat request through vision when a user message carries images: the model is upgraded when it
     * lacks vision, and every image is loaded and checked like a vision image, then sent inline.
     */
    const prepareChat = (projectId: string, request: ChatRequest): Effect.Effect<PreparedChat, ApiError> =>
      Effect.gen(function*() {
        const found = imagePartsOf(request.messages)
        if (found.length === 0) return { request, kind: "chat", upgradedFrom: null }
        const choice = visionModelFor(request.model)
        const refs: Array<ImageRef> = found.map(({ m, p, part }, index) => ({
          index,
          param: `messages[${m}].content[${p}]`,
          source: sourceOfUrl(part.image_url.url)
        }))
        const images = yield* loadFor(projectId, choice.model, refs)
        const replaced = new Map(found.map(({ m, p }, i) => [`${m}:${p}`, images[i]!]))
        const messages = request.messages.map((message, m): ChatMessage =>
          message.role === "user" && typeof message.content !== "string"
            ? {
              ...message,
              content: message.content.map((part, p): ContentPart => {
                const image = replaced.get(`${m}:${p}`)
                return image === undefined || part.type !== "image_url"
                  ? part
                  : { type: "image_url", image_url: { ...part.image_url, url: image.dataUrl } }
              })
            }
            : message
        )
        if (choice.upgradedFrom !== null) {
          yield* Effect.logInfo("chat with images upgraded to a vision model").pipe(
            Effect.annotateLogs({ from: choice.upgradedFrom, to: choice.model })
          )
        }
        return { request: { ...request, model: choice.model, messages }, kind: "vision", upgradedFrom: choice.upgradedFrom }
      })

    return { analyze, stream, prepareChat, visionModelFor }
  })
}) {}
