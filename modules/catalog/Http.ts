/** Handlers of the public catalog. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { cachedResponse } from "../../layers/http/cache.ts"
import type { CatalogModelRow, CatalogProviderRow } from "../../schemas/catalog.ts"
import { ApiError } from "../../schemas/errors.ts"
import { CAPABILITIES, type CatalogModel } from "./Model.ts"
import { Catalog, parseCapabilities } from "./Service.ts"

/** Catalog responses may be cached for an hour (contract §8). */
export const CATALOG_MAX_AGE = 3600

const TYPES = ["chat", "reasoning", "code", "search", "vision", "image", "tts", "stt"]

export const logoUrl = (providerId: string) => `/api/providers/${encodeURIComponent(providerId)}/logo`

export const toCatalogRow = (model: CatalogModel): typeof CatalogModelRow.Type => ({
  id: model.id,
  name: model.name,
  provider: model.provider,
  provider_name: model.provider_name,
  provider_logo_url: logoUrl(model.provider),
  type: model.type,
  types: model.types,
  context_window: model.context_window,
  context_display: model.context_display,
  description: model.description,
  capabilities: model.capabilities,
  pricing: model.pricing,
  pricing_status: model.pricing_status,
  price_source: model.price_source,
  status: model.status,
  released_at: model.released_at
})

const json = (value: unknown) => cachedResponse(JSON.stringify(value), "application/json", CATALOG_MAX_AGE)

export const CatalogHttpLive = HttpApiBuilder.group(GatewayApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const providers: ReadonlyArray<typeof CatalogProviderRow.Type> = catalog.listProviders().map((p) => ({
      id: p.id,
      name: p.name,
      logo_url: logoUrl(p.id),
      website: p.website,
      docs_url: p.docs_url,
      model_count: p.model_count
    }))
    return handlers
      .handle("listModels", ({ urlParams }) =>
        Effect.gen(function*() {
          const capabilities = parseCapabilities(
            urlParams.capability === undefined
              ? []
              : typeof urlParams.capability === "string"
              ? [urlParams.capability]
              : urlParams.capability
          )
          const known = new Set<string>(CAPABILITIES.map((c) => c.toLowerCase()))
          const unknown = capabilities.find((c) => !known.has(c.toLowerCase()))
          if (unknown !== undefined) {
            return yield* ApiError.badRequest(`unknown capability ${unknown}; expected one of ${CAPABILITIES.join(", ")}`, {
              param: "capability"
            })
          }
          const type = urlParams.type?.trim().toLowerCase() ?? ""
          if (type !== "" && !TYPES.includes(type)) {
            return yield* ApiError.badRequest(`unknown type ${urlParams.type}; expected one of ${TYPES.join(", ")}`, {
              param: "type"
            })
          }
          const rows = catalog.listModels({
            provider: urlParams.provider,
            type: urlParams.type,
            search: urlParams.search,
            capabilities
          }).map(toCatalogRow)
          return yield* json({ object: "list", data: rows, total: rows.length })
        }))
      .handle("listProviders", () => json({ object: "list", data: providers, total: providers.length }))
      .handle("providerLogo", ({ path }) =>
        Option.match(catalog.logo(path.id), {
          onNone: () => Effect.fail(ApiError.notFound(`Provider ${path.id}`)),
          onSome: (logo) => cachedResponse(logo.svg, "image/svg+xml", CATALOG_MAX_AGE)
        }))
  }))
