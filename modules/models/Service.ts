/**
 * The per-key model list of `GET /api/v1/models` (contract §2.3 ModelList, §4.4): catalog rows with the
 * availability this project has (a managed key of the service, or one of its BYOK connections), the models
 * synced from its connections, and its custom providers' models plus one alias row per custom provider.
 *
 * Each database-backed source runs concurrently under its own time limit (`MODEL_SOURCE_TIMEOUT_MS`); a source
 * that fails or times out is left out and the list says `partial: true`.
 */
import { Cause, Duration, Effect, Option } from "effect"
import { AppConfig, UPSTREAM_PROVIDERS } from "../../layers/config.ts"
import type { UnifiedModel } from "../../schemas/catalog.ts"
import { ApiError } from "../../schemas/errors.ts"
import { Catalog, type CatalogModel } from "../catalog/Service.ts"
import { type ProviderConnectionView, ProviderConnections, type SyncedModel } from "../connections/Service.ts"
import { CustomProviders, type CustomProviderView } from "../custom-providers/Service.ts"

export type UnifiedModelRow = typeof UnifiedModel.Type

export interface ModelListPage {
  readonly object: "list"
  readonly data: ReadonlyArray<UnifiedModelRow>
  readonly total: number
  readonly distinct_model_ids: number
  readonly next_cursor: string | null
  readonly partial: boolean
  readonly providers: ReadonlyArray<Readonly<Record<string, unknown>>>
}

export interface ModelListRequest {
  readonly provider?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const CUSTOM_PREFIX = "custom:"

export const encodeOffset = (offset: number) => Buffer.from(`o:${offset}`, "utf8").toString("base64url")

const decodeOffset = (cursor: string): Effect.Effect<number, ApiError> => {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  return match?.[1] === undefined
    ? Effect.fail(ApiError.badRequest("cursor is not valid", { param: "cursor" }))
    : Effect.succeed(Number(match[1]))
}

const createdOf = (model: CatalogModel) => {
  const parsed = model.released_at === null ? Number.NaN : Date.parse(model.released_at)
  return Number.isFinite(parsed) ? Math.floor(parsed / 1000) : 0
}

/** What the list is assembled from: the catalog, the project's database-backed sources and the managed keys. */
export interface ModelListSources {
  readonly catalog: Catalog
  readonly connectionsOf: (projectId: string) => Effect.Effect<ReadonlyArray<ProviderConnectionView>>
  readonly syncedModelsOf: (projectId: string) => Effect.Effect<ReadonlyArray<SyncedModel>>
  readonly customProvidersOf: (projectId: string) => Effect.Effect<ReadonlyArray<CustomProviderView>>
  /** Whether the service holds a managed key for the provider. */
  readonly managed: (provider: string) => boolean
  readonly sourceTimeout: Duration.Duration
}

export const makeModelList = (sources: ModelListSources) => {
  const { catalog, managed, sourceTimeout } = sources
  const catalogByKey = new Map(catalog.models.map((m) => [`${m.provider}/${m.id.toLowerCase()}`, m]))

  /** Runs one source under the time limit; None (and a warning) when it fails, dies or times out. */
  const source = <A>(name: string, effect: Effect.Effect<A>) =>
    effect.pipe(
      Effect.timeoutOption(sourceTimeout),
      Effect.tap((result) =>
        Option.isNone(result)
          ? Effect.logWarning("model source timed out").pipe(Effect.annotateLogs({ source: name }))
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning("model source failed").pipe(
            Effect.annotateLogs({ source: name, cause: Cause.pretty(cause).split("\n")[0] ?? "" }),
            Effect.as(Option.none<A>())
          )
      )
    )

  const catalogRow = (model: CatalogModel, byok: ProviderConnectionView | undefined): UnifiedModelRow => {
    const hasManagedKey = managed(model.provider)
    const available = hasManagedKey || byok !== undefined
    return {
      id: model.id,
      object: "model",
      created: createdOf(model),
      owned_by: model.provider,
      name: model.name,
      type: model.type,
      types: model.types,
      context_window: model.context_window,
      provider: model.provider,
      // The project's own key takes precedence over the service's managed key.
      source: byok !== undefined ? "byok" : "service",
      connection_id: byok?.id ?? null,
      status: model.status,
      available,
      unavailable_reason: available ? null : "provider_not_configured",
      pricing_status: model.pricing_status
    }
  }

  const syncedRow = (model: SyncedModel): UnifiedModelRow => {
    const known = catalogByKey.get(`${model.provider}/${model.modelId.toLowerCase()}`)
    const active = model.connectionStatus === "active"
    return {
      id: model.modelId,
      object: "model",
      created: model.created,
      owned_by: model.ownedBy ?? model.provider,
      name: known?.name ?? model.name,
      type: known?.type ?? "chat",
      types: known?.types ?? ["chat"],
      context_window: known?.context_window ?? 0,
      provider: model.provider,
      source: "byok",
      connection_id: model.connectionId,
      status: "active",
      available: active,
      unavailable_reason: active ? null : "connection_invalid",
      pricing_status: known?.pricing_status ?? "unpriced"
    }
  }

  const customRows = (provider: CustomProviderView): ReadonlyArray<UnifiedModelRow> => {
    const owner = `${CUSTOM_PREFIX}${provider.id}`
    const created = Math.floor(Date.parse(provider.created_at) / 1000)
    const row = (id: string, name: string, active: boolean, reason: string): UnifiedModelRow => ({
      id,
      object: "model",
      created,
      owned_by: owner,
      name,
      type: "chat",
      types: ["chat"],
      context_window: 0,
      provider: owner,
      source: "custom",
      connection_id: null,
      status: active ? "active" : "inactive",
      available: active,
      unavailable_reason: active ? null : reason,
      pricing_status: "unpriced"
    })
    const firstActive = provider.models.find((m) => m.is_active)
    return [
      // The alias row: the provider's name routes to its first active model.
      row(provider.name, provider.name, provider.is_active && firstActive !== undefined, provider.is_active ? "no_active_models" : "provider_inactive"),
      ...provider.models.map((m) =>
        row(m.model_name, m.display_name, provider.is_active && m.is_active, provider.is_active ? "model_inactive" : "provider_inactive")
      )
    ]
  }

  const list = (projectId: string, request: ModelListRequest) =>
    Effect.gen(function*() {
      const offset = request.cursor === undefined ? 0 : yield* decodeOffset(request.cursor)
      const filter = request.provider?.trim().toLowerCase() ?? ""
      const wantsCustom = filter === "custom" || filter.startsWith(CUSTOM_PREFIX)
      const wantsUpstream = filter === "" || !wantsCustom

      const [connectionList, synced, custom] = yield* Effect.all([
        wantsUpstream ? source("connections", sources.connectionsOf(projectId)) : Effect.succeed(Option.some([])),
        wantsUpstream ? source("synced_models", sources.syncedModelsOf(projectId)) : Effect.succeed(Option.some([])),
        filter === "" || wantsCustom ? source("custom_providers", sources.customProvidersOf(projectId)) : Effect.succeed(Option.some([]))
      ], { concurrency: "unbounded" })
      const partial = Option.isNone(connectionList) || Option.isNone(synced) || Option.isNone(custom)

      const byokOf = new Map<string, ProviderConnectionView>()
      for (const connection of Option.getOrElse(connectionList, () => [])) {
        // Newest first: the first active connection of a provider is the one BYOK calls use.
        if (connection.status === "active" && !byokOf.has(connection.provider)) byokOf.set(connection.provider, connection)
      }
      const upstreamMatches = (provider: string) => filter === "" || provider.toLowerCase() === filter
      const rows: Array<UnifiedModelRow> = []
      if (wantsUpstream) {
        for (const model of catalog.models) {
          if (upstreamMatches(model.provider)) rows.push(catalogRow(model, byokOf.get(model.provider)))
        }
        for (const model of Option.getOrElse(synced, () => [])) {
          if (upstreamMatches(model.provider)) rows.push(syncedRow(model))
        }
      }
      for (const provider of Option.getOrElse(custom, () => [])) {
        if (filter === "" || filter === "custom" || filter === `${CUSTOM_PREFIX}${provider.id.toLowerCase()}`) {
          rows.push(...customRows(provider))
        }
      }

      const summary = new Map<string, { id: string; name: string; model_count: number; available_count: number; managed_key: boolean; byok_connection_id: string | null; custom: boolean }>()
      for (const row of rows) {
        const entry = summary.get(row.provider) ?? {
          id: row.provider,
          name: row.source === "custom"
            ? Option.getOrElse(custom, () => []).find((p) => `${CUSTOM_PREFIX}${p.id}` === row.provider)?.name ?? row.provider
            : Option.match(catalog.provider(row.provider), { onNone: () => row.provider, onSome: (p) => p.name }),
          model_count: 0,
          available_count: 0,
          managed_key: row.source !== "custom" && managed(row.provider),
          byok_connection_id: byokOf.get(row.provider)?.id ?? null,
          custom: row.source === "custom"
        }
        entry.model_count += 1
        if (row.available) entry.available_count += 1
        summary.set(row.provider, entry)
      }
      const providers = [...summary.values()].map((p) => ({ ...p, available: p.available_count > 0 }))

      const limit = request.limit ?? rows.length
      const page = rows.slice(offset, offset + limit)
      return {
        object: "list",
        data: page,
        total: rows.length,
        distinct_model_ids: new Set(rows.map((r) => r.id)).size,
        next_cursor: offset + page.length < rows.length ? encodeOffset(offset + page.length) : null,
        partial,
        providers
      } satisfies ModelListPage
    })

  return { list }
}

export class ModelListing extends Effect.Service<ModelListing>()("ModelListing", {
  effect: Effect.gen(function*() {
    const catalog = yield* Catalog
    const connections = yield* ProviderConnections
    const customProviders = yield* CustomProviders
    const config = yield* AppConfig
    return makeModelList({
      catalog,
      connectionsOf: connections.connectionsOf,
      syncedModelsOf: connections.syncedModelsOf,
      customProvidersOf: customProviders.list,
      managed: (provider) => {
        const known = UPSTREAM_PROVIDERS.find((p) => p.id === provider)
        return known !== undefined && Option.isSome(config.upstreams[known.id].apiKey)
      },
      sourceTimeout: Duration.millis(config.modelSourceTimeoutMs)
    })
  })
}) {}
