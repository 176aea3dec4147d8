/**
 * The model catalog, built once at start from the data packages and the overlay (`Build.ts`) and kept in
 * memory. Other modules (chat gateway, voice, vision, billing) look models up here.
 */
import { Effect, Option } from "effect"
import { buildDefaultCatalog } from "./Build.ts"
import { type Logo, renderLogo } from "./Logos.ts"
import type { CatalogModel, CatalogProvider, ModelFilter } from "./Model.ts"
import type { ProviderEntry } from "./overlay.ts"

export type { Capabilities, CatalogModel, CatalogProvider, ModelFilter, ModelType, Pricing, PriceSource } from "./Model.ts"

const includesFolded = (haystack: string, needle: string) => haystack.toLowerCase().includes(needle)

/** Splits repeated and comma-separated capability values into one list. */
export const parseCapabilities = (values: ReadonlyArray<string>): ReadonlyArray<string> =>
  values.flatMap((value) => value.split(",")).map((c) => c.trim()).filter((c) => c.length > 0)

const given = (value: string | undefined) => value !== undefined && value.trim().length > 0

export const matchesFilter = (model: CatalogModel, filter: ModelFilter): boolean => {
  if (given(filter.provider) && model.provider.toLowerCase() !== filter.provider?.trim().toLowerCase()) return false
  if (given(filter.type)) {
    const type = filter.type?.trim().toLowerCase()
    if (!model.types.some((t) => t === type)) return false
  }
  if (given(filter.search)) {
    const needle = (filter.search ?? "").trim().toLowerCase()
    const fields = [model.name, model.id, model.provider, model.provider_name, model.description]
    if (!fields.some((field) => includesFolded(field, needle))) return false
  }
  for (const capability of filter.capabilities ?? []) {
    const wanted = Object.entries(model.capabilities).find(([name]) => name.toLowerCase() === capability.toLowerCase())
    if (!wanted || !wanted[1]) return false
  }
  return true
}

export class Catalog extends Effect.Service<Catalog>()("Catalog", {
  effect: Effect.gen(function*() {
    const built = buildDefaultCatalog()
    for (const warning of built.warnings) yield* Effect.logWarning(`catalog: ${warning}`)
    yield* Effect.logDebug("catalog built").pipe(
      Effect.annotateLogs({ models: built.models.length, providers: built.providers.length })
    )
    const byId = new Map<string, CatalogModel>()
    for (const model of built.models) {
      const key = model.id.toLowerCase()
      if (!byId.has(key)) byId.set(key, model)
    }
    const byProviderAndId = new Map(built.models.map((m) => [`${m.provider}/${m.id.toLowerCase()}`, m]))
    const entries = new Map(built.providers.map((p) => [p.id, p]))
    const counts = new Map<string, number>()
    for (const model of built.models) counts.set(model.provider, (counts.get(model.provider) ?? 0) + 1)
    const providers: ReadonlyArray<CatalogProvider> = built.providers.map((p) => ({
      id: p.id,
      name: p.name,
      website: p.website,
      docs_url: p.docs_url,
      model_count: counts.get(p.id) ?? 0
    }))
    const logos = new Map<string, Logo>(built.providers.map((p) => [p.id, renderLogo(p)]))

    return {
      /** Every catalog model, grouped by provider in catalog order. */
      models: built.models,
      /** A model by its exact id, compared case-insensitively (the first provider in catalog order on ties). */
      findModel: (id: string): Option.Option<CatalogModel> => Option.fromNullable(byId.get(id.trim().toLowerCase())),
      /** A model of one provider by exact id (case-insensitive), for ids several providers serve. */
      findProviderModel: (provider: string, id: string): Option.Option<CatalogModel> =>
        Option.fromNullable(byProviderAndId.get(`${provider.trim().toLowerCase()}/${id.trim().toLowerCase()}`)),
      listModels: (filter: ModelFilter = {}): ReadonlyArray<CatalogModel> =>
        built.models.filter((model) => matchesFilter(model, filter)),
      listProviders: (): ReadonlyArray<CatalogProvider> => providers,
      /** A provider's display entry by id (case-insensitive). */
      provider: (id: string): Option.Option<ProviderEntry> => Option.fromNullable(entries.get(id.toLowerCase())),
      /** The SVG logo of a known provider. */
      logo: (id: string): Option.Option<Logo> => Option.fromNullable(logos.get(id.toLowerCase()))
    }
  })
}) {}
