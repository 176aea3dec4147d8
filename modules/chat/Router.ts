/**
 * Routing: which upstream serves a model for a project, and with which key.
 *
 * 1. A custom provider of the project whose name or model matches (inactive ones skipped) → its base URL,
 *    format and key (`keySource` `custom`).
 * 2. Otherwise the catalog names the provider: the project's BYOK connection for it, else the managed key.
 * 3. No usable key → 400 `provider_not_configured`, never an upstream 401.
 */
import { Effect, Option } from "effect"
import { AppConfig, type UpstreamProviderId, UPSTREAM_PROVIDERS } from "../../layers/config.ts"
import type { ProviderFamily, UpstreamTarget } from "../../layers/providers/types.ts"
import { ApiError } from "../../schemas/errors.ts"
import type { CatalogModel } from "../catalog/Model.ts"
import { Catalog } from "../catalog/Service.ts"
import { ProviderConnections } from "../connections/Service.ts"
import { CustomProviders } from "../custom-providers/Service.ts"
import type { KeySource, UnitPrices } from "../usage/cost.ts"

export interface Route {
  /** The model id the caller asked for. */
  readonly model: string
  /** Catalog provider id, or `custom:<provider_id>`. */
  readonly provider: string
  readonly keySource: KeySource
  readonly connectionId: string | null
  readonly target: UpstreamTarget
  /** Null when the price is unknown (or a custom provider's own endpoint). */
  readonly prices: UnitPrices | null
  readonly pricingStatus: "priced" | "unpriced" | "custom"
  readonly catalogModel: Option.Option<CatalogModel>
}

/** Anthropic and Google speak their own formats; every other catalog vendor is OpenAI-compatible. */
export const familyOf = (provider: string): ProviderFamily =>
  provider === "anthropic" ? "anthropic" : provider === "google" ? "google" : "openai"

const isUpstream = (provider: string): provider is UpstreamProviderId =>
  UPSTREAM_PROVIDERS.some((p) => p.id === provider)

const pricesOf = (model: CatalogModel): UnitPrices | null =>
  model.pricing_status === "priced"
    ? {
      input_per_million: model.pricing.input_per_million,
      output_per_million: model.pricing.output_per_million,
      cached_input_per_million: model.pricing.cached_input_per_million,
      per_image_usd: model.pricing.per_image_usd,
      per_1k_chars: model.pricing.per_1k_chars,
      per_minute: model.pricing.per_minute
    }
    : null

export const modelNotFound = (model: string) =>
  new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: "model_not_found",
    message: `Model ${model} is not in the catalog and matches no custom provider of this project`,
    param: "model"
  })

export const providerNotConfigured = (provider: string) =>
  new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: "provider_not_configured",
    message: `No API key for provider ${provider}: add a provider connection (BYOK) or set ${provider.toUpperCase()}_API_KEY`,
    param: "model"
  })

export class ChatRouter extends Effect.Service<ChatRouter>()("ChatRouter", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const catalog = yield* Catalog
    const custom = yield* CustomProviders
    const connections = yield* ProviderConnections
    const timeoutMs = config.upstreamTimeoutMs

    const resolve = (projectId: string, model: string): Effect.Effect<Route, ApiError> =>
      Effect.gen(function*() {
        const own = yield* custom.resolve(projectId, model)
        if (Option.isSome(own)) {
          const provider = own.value
          return {
            model,
            provider: `custom:${provider.providerId}`,
            keySource: "custom",
            connectionId: null,
            target: {
              family: provider.apiFormat,
              baseUrl: provider.baseUrl,
              apiKey: provider.apiKey,
              model: provider.upstreamModel,
              timeoutMs
            },
            prices: null,
            pricingStatus: "custom",
            catalogModel: Option.none()
          } satisfies Route
        }
        const found = catalog.findModel(model)
        if (Option.isNone(found)) return yield* modelNotFound(model)
        const entry = found.value
        const family = familyOf(entry.provider)
        const prices = pricesOf(entry)
        const base = {
          model,
          provider: entry.provider,
          prices,
          pricingStatus: prices === null ? "unpriced" as const : "priced" as const,
          catalogModel: found
        }
        const byok = yield* connections.byokKey(projectId, entry.provider)
        if (Option.isSome(byok)) {
          const fallbackBase = isUpstream(entry.provider) ? config.upstreams[entry.provider].baseUrl : undefined
          const baseUrl = byok.value.baseUrl ?? fallbackBase
          if (baseUrl !== undefined) {
            return {
              ...base,
              keySource: "byok",
              connectionId: byok.value.connectionId,
              target: { family, baseUrl, apiKey: Option.some(byok.value.apiKey), model: entry.id, timeoutMs }
            } satisfies Route
          }
        }
        if (isUpstream(entry.provider)) {
          const upstream = config.upstreams[entry.provider]
          if (Option.isSome(upstream.apiKey)) {
            return {
              ...base,
              keySource: "managed",
              connectionId: null,
              target: { family, baseUrl: upstream.baseUrl, apiKey: upstream.apiKey, model: entry.id, timeoutMs }
            } satisfies Route
          }
        }
        return yield* providerNotConfigured(entry.provider)
      })

    return { resolve, catalog }
  })
}) {}
