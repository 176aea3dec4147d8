/**
 * Provider connections (BYOK, contract §2.3): a project's own keys for catalog providers, encrypted at rest.
 * A connection can be validated (the upstream's model list answers) and synced (its model list is stored and
 * diffed); the gateway asks `byokKey` for the key to use for a provider.
 */
import { FetchHttpClient } from "@effect/platform"
import { Duration, Effect, Either, Option, Redacted } from "effect"
import { AppConfig, UPSTREAM_PROVIDERS, type UpstreamProviderId } from "../../layers/config.ts"
import { generateId, SecretBox } from "../../layers/crypto.ts"
import { makeLookupCache } from "../../layers/lookup-cache.ts"
import { checkBaseUrl, parseBaseUrl, requirePublicHost } from "../../layers/provider-url.ts"
import { ApiError } from "../../schemas/errors.ts"
import { Events } from "../events/Service.ts"
import { type ConnectionRow, type Keyset, makeConnectionsRepo, type SyncRow } from "./Repo.ts"
import { type ListedModel, listUpstreamModels, supportsListing, type UpstreamListError } from "./Upstream.ts"

export const API_FORMATS = ["openai", "anthropic", "google", "native"] as const

/** The wire format a provider speaks when a connection does not say. */
export const defaultApiFormat = (provider: UpstreamProviderId): string => {
  switch (provider) {
    case "anthropic":
      return "anthropic"
    case "google":
      return "google"
    case "deepgram":
    case "cartesia":
    case "elevenlabs":
    case "assemblyai":
    case "spitch":
      return "native"
    default:
      return "openai"
  }
}

export interface ProviderConnectionView {
  readonly id: string
  readonly object: "provider_connection"
  readonly name: string
  readonly provider: string
  readonly api_format: string
  readonly base_url: string | null
  readonly status: string
  readonly last_tested_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface ProviderValidationView {
  readonly valid: boolean
  readonly provider: string
  readonly api_format: string
  readonly message: string
  readonly models_discovered: number
}

export interface ModelSyncView {
  readonly id: string
  readonly object: "model_sync"
  readonly connection_id: string
  readonly status: string
  readonly counts: Readonly<Record<string, unknown>>
  readonly changes: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly error: string | null
  readonly created_at: string
}

/** What the gateway needs to call a provider with the project's own key. */
export interface ByokKey {
  readonly connectionId: string
  readonly apiKey: Redacted.Redacted
  /** The connection's base URL; null means the provider's default (`config.upstreams[provider].baseUrl`). */
  readonly baseUrl: string | null
  readonly apiFormat: string
}

export interface SyncedModel {
  readonly connectionId: string
  readonly provider: string
  readonly connectionStatus: string
  readonly modelId: string
  readonly name: string
  readonly ownedBy: string | null
  readonly created: number
}

const toView = (row: ConnectionRow): ProviderConnectionView => ({
  id: row.id,
  object: "provider_connection",
  name: row.name,
  provider: row.provider,
  api_format: row.api_format,
  base_url: row.base_url,
  status: row.status,
  last_tested_at: row.last_tested_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

const record = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {}

const toSyncView = (row: SyncRow): ModelSyncView => ({
  id: row.id,
  object: "model_sync",
  connection_id: row.connection_id,
  status: row.status,
  counts: record(row.counts),
  changes: Array.isArray(row.changes) ? row.changes.map(record) : [],
  error: row.error,
  created_at: row.created_at.toISOString()
})

export const encodeCursor = (keyset: Keyset) => Buffer.from(`${keyset.micros}:${keyset.id}`, "utf8").toString("base64url")

export const decodeCursor = (cursor: string): Effect.Effect<Keyset, ApiError> => {
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const separator = text.indexOf(":")
  const micros = text.slice(0, separator)
  const id = text.slice(separator + 1)
  return separator > 0 && /^\d{1,20}$/.test(micros) && id.length > 0
    ? Effect.succeed({ micros, id })
    : Effect.fail(ApiError.badRequest("cursor is not valid", { param: "cursor" }))
}

/** At most this many change entries are kept per sync; counts stay exact. */
const MAX_CHANGES = 1000

export class ProviderConnections extends Effect.Service<ProviderConnections>()("ProviderConnections", {
  effect: Effect.gen(function*() {
    const repo = yield* makeConnectionsRepo
    const box = yield* SecretBox
    const config = yield* AppConfig
    const listTimeout = Duration.millis(config.providerListTimeoutMs)
    const events = yield* Events
    /** What `provider_connection.*` webhook events say about a connection (never its key). */
    const eventData = (row: ConnectionRow) => ({
      connection_id: row.id,
      name: row.name,
      provider: row.provider,
      api_format: row.api_format,
      base_url: row.base_url
    })
    /** The newest active connection per `projectId\nprovider`, for routing. */
    const active = yield* makeLookupCache((key: string) => {
      const [projectId = "", provider = ""] = key.split("\n")
      return repo.newestActive(projectId, provider).pipe(Effect.orDie)
    })
    /** Creating, deleting, validating or syncing can change which connection is active. */
    const changed = <A, E>(effect: Effect.Effect<A, E>) => Effect.ensuring(effect, active.invalidateAll)

    const knownProvider = (provider: string) =>
      Option.fromNullable(UPSTREAM_PROVIDERS.find((p) => p.id === provider.trim().toLowerCase())).pipe(
        Option.match({
          onNone: () =>
            Effect.fail(ApiError.badRequest(
              `provider must be one of ${UPSTREAM_PROVIDERS.map((p) => p.id).join(", ")}`,
              { param: "provider" }
            )),
          onSome: (p) => Effect.succeed(p.id)
        })
      )

    const apiFormatFor = (provider: UpstreamProviderId, requested: string | undefined) => {
      const format = requested?.trim().toLowerCase() || defaultApiFormat(provider)
      return API_FORMATS.some((f) => f === format)
        ? Effect.succeed(format)
        : Effect.fail(ApiError.badRequest(`api_format must be one of ${API_FORMATS.join(", ")}`, { param: "api_format" }))
    }

    const validKey = (key: string) => {
      const trimmed = key.trim()
      return trimmed.length === 0 || trimmed.length > 4096
        ? Effect.fail(ApiError.badRequest("api_key must have 1 to 4096 characters", { param: "api_key" }))
        : Effect.succeed(trimmed)
    }

    const baseUrlOf = (provider: string, baseUrl: string | null) => {
      if (baseUrl !== null) return baseUrl
      const known = UPSTREAM_PROVIDERS.find((p) => p.id === provider)
      return known ? config.upstreams[known.id].baseUrl : ""
    }

    const load = (projectId: string, id: string) =>
      repo.find(projectId, id).pipe(
        Effect.orDie,
        Effect.flatMap((row) => row ? Effect.succeed(row) : Effect.fail(ApiError.notFound("Provider connection")))
      )

    /** Calls the upstream listing for a key; the base URL is re-checked when private networks are not allowed. */
    const discover = (target: { provider: string; apiFormat: string; baseUrl: string | null; apiKey: Redacted.Redacted }) =>
      Effect.gen(function*() {
        const format = target.apiFormat
        if (!supportsListing(format)) return Option.none<Either.Either<ReadonlyArray<ListedModel>, UpstreamListError>>()
        const baseUrl = baseUrlOf(target.provider, target.baseUrl)
        if (!config.allowPrivateProviderUrls) {
          yield* requirePublicHost(yield* parseBaseUrl(baseUrl, "base_url"), "base_url")
        }
        const result = yield* listUpstreamModels({ format, baseUrl, apiKey: target.apiKey }, listTimeout).pipe(
          Effect.provide(FetchHttpClient.layer),
          Effect.either
        )
        return Option.some(result)
      })

    const validationOf = (
      provider: string,
      apiFormat: string,
      outcome: Option.Option<Either.Either<ReadonlyArray<ListedModel>, UpstreamListError>>
    ): ProviderValidationView =>
      Option.match(outcome, {
        onNone: () => ({
          valid: false,
          provider,
          api_format: apiFormat,
          message: `api_format ${apiFormat} has no model-listing endpoint to validate against; the key is stored untested`,
          models_discovered: 0
        }),
        onSome: Either.match({
          onLeft: (error) => ({ valid: false, provider, api_format: apiFormat, message: error.message, models_discovered: 0 }),
          onRight: (models) => ({
            valid: true,
            provider,
            api_format: apiFormat,
            message: `The key is valid: ${models.length} models available`,
            models_discovered: models.length
          })
        })
      })

    /** An auth failure marks the connection invalid; success marks it active; other failures keep its status. */
    const statusAfter = (outcome: Option.Option<Either.Either<unknown, UpstreamListError>>) =>
      Option.match(outcome, {
        onNone: () => null,
        onSome: Either.match({
          onLeft: (error) => error.kind === "auth" ? "invalid" : null,
          onRight: () => "active"
        })
      })

    const create = (
      projectId: string,
      input: { name?: string | undefined; provider: string; api_key: string; base_url?: string | null | undefined; api_format?: string | undefined }
    ) =>
      Effect.gen(function*() {
        const provider = yield* knownProvider(input.provider)
        const apiFormat = yield* apiFormatFor(provider, input.api_format)
        const apiKey = yield* validKey(input.api_key)
        const name = (input.name ?? provider).trim()
        if (name.length === 0 || name.length > 200) {
          return yield* ApiError.badRequest("name must have 1 to 200 characters", { param: "name" })
        }
        const baseUrl = input.base_url === undefined || input.base_url === null || input.base_url.trim() === ""
          ? null
          : yield* checkBaseUrl(input.base_url, "base_url", config.allowPrivateProviderUrls)
        const row = yield* repo.insert({
          id: generateId("pconn"),
          project_id: projectId,
          name,
          provider,
          api_format: apiFormat,
          base_url: baseUrl,
          api_key_encrypted: box.encrypt(apiKey)
        }).pipe(
          Effect.tap((row) => events.publish({ projectId, type: "provider_connection.created", data: eventData(row) })),
          repo.withTransaction,
          Effect.orDie
        )
        yield* Effect.logInfo("provider connection created").pipe(
          Effect.annotateLogs({ project_id: projectId, connection_id: row.id, provider })
        )
        return toView(row)
      })

    const list = (projectId: string, options: { limit?: number | undefined; cursor?: string | undefined }) =>
      Effect.gen(function*() {
        const limit = options.limit ?? 20
        const after = options.cursor === undefined ? null : yield* decodeCursor(options.cursor)
        const rows = yield* repo.page(projectId, limit + 1, after).pipe(Effect.orDie)
        const page = rows.slice(0, limit)
        const last = page[page.length - 1]
        return {
          data: page.map(toView),
          next_cursor: rows.length > limit && last ? encodeCursor({ micros: last.created_us, id: last.id }) : null
        }
      })

    const validate = (projectId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* load(projectId, id)
        const apiKey = yield* box.decrypt(row.api_key_encrypted).pipe(Effect.orDie)
        const outcome = yield* discover({ provider: row.provider, apiFormat: row.api_format, baseUrl: row.base_url, apiKey })
        const result = validationOf(row.provider, row.api_format, outcome)
        yield* repo.setTested(row.id, statusAfter(outcome), new Date()).pipe(
          Effect.zipRight(events.publish({
            projectId,
            type: "provider_connection.tested",
            data: { ...eventData(row), status: statusAfter(outcome), valid: result.valid, models_discovered: result.models_discovered }
          })),
          repo.withTransaction,
          Effect.orDie
        )
        yield* Effect.logInfo("provider connection validated").pipe(
          Effect.annotateLogs({ project_id: projectId, connection_id: row.id, valid: result.valid })
        )
        return result
      })

    const validateKey = (
      input: { provider: string; api_key: string; base_url?: string | null | undefined; api_format?: string | undefined }
    ) =>
      Effect.gen(function*() {
        const provider = yield* knownProvider(input.provider)
        const apiFormat = yield* apiFormatFor(provider, input.api_format)
        const apiKey = Redacted.make(yield* validKey(input.api_key))
        const baseUrl = input.base_url === undefined || input.base_url === null || input.base_url.trim() === ""
          ? null
          : yield* checkBaseUrl(input.base_url, "base_url", config.allowPrivateProviderUrls)
        const outcome = yield* discover({ provider, apiFormat, baseUrl, apiKey })
        return validationOf(provider, apiFormat, outcome)
      })

    const sync = (projectId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* load(projectId, id)
        if (!supportsListing(row.api_format)) {
          return yield* ApiError.badRequest(
            `model sync needs a model-listing endpoint; api_format ${row.api_format} has none`,
            { code: "sync_not_supported" }
          )
        }
        const apiKey = yield* box.decrypt(row.api_key_encrypted).pipe(Effect.orDie)
        const outcome = yield* discover({ provider: row.provider, apiFormat: row.api_format, baseUrl: row.base_url, apiKey })
        const now = new Date()
        const listed = Option.getOrElse(outcome, () => Either.right<ReadonlyArray<ListedModel>>([]))
        const saved = yield* Either.match(listed, {
          onLeft: (error) =>
            Effect.gen(function*() {
              yield* repo.setTested(row.id, statusAfter(outcome), now)
              return yield* repo.insertSync({
                id: generateId("msync"),
                connection_id: row.id,
                status: "failed",
                counts: JSON.stringify({}),
                changes: JSON.stringify([]),
                error: error.message
              })
            }),
          onRight: (models) =>
            Effect.gen(function*() {
              const existing = new Map((yield* repo.syncedModels(row.id)).map((m) => [m.model_id, m]))
              const incoming = new Map(models.map((m) => [m.id, m]))
              const changes: Array<Record<string, unknown>> = []
              const added = models.filter((m) => !existing.has(m.id))
              const removed = [...existing.keys()].filter((modelId) => !incoming.has(modelId))
              const updated = models.filter((m) => {
                const before = existing.get(m.id)
                return before !== undefined &&
                  (before.name !== m.name || before.owned_by !== m.owned_by || Number(before.created) !== m.created)
              })
              for (const m of added) changes.push({ type: "added", model_id: m.id, name: m.name })
              for (const modelId of removed) changes.push({ type: "removed", model_id: modelId })
              for (const m of updated) {
                const before = existing.get(m.id)
                changes.push({ type: "updated", model_id: m.id, name: m.name, previous_name: before?.name ?? null })
              }
              yield* repo.deleteModels(row.id, removed)
              yield* repo.upsertModels(
                [...added, ...updated].map((m) => ({
                  connection_id: row.id,
                  model_id: m.id,
                  name: m.name,
                  owned_by: m.owned_by,
                  created: m.created
                })),
                now
              )
              yield* repo.setTested(row.id, "active", now)
              return yield* repo.insertSync({
                id: generateId("msync"),
                connection_id: row.id,
                status: "completed",
                counts: JSON.stringify({
                  discovered: models.length,
                  added: added.length,
                  removed: removed.length,
                  updated: updated.length,
                  unchanged: models.length - added.length - updated.length
                }),
                changes: JSON.stringify(changes.slice(0, MAX_CHANGES)),
                error: null
              })
            })
        }).pipe(
          Effect.tap((saved) =>
            events.publish({
              projectId,
              type: saved.status === "completed" ? "provider_model_sync.completed" : "provider_model_sync.failed",
              data: { ...toSyncView(saved), provider: row.provider }
            })
          ),
          repo.withTransaction,
          Effect.orDie
        )
        yield* Effect.logInfo("provider models synced").pipe(
          Effect.annotateLogs({ project_id: projectId, connection_id: row.id, status: saved.status })
        )
        return toSyncView(saved)
      })

    return {
      create: (...args: Parameters<typeof create>) => changed(create(...args)),
      list,
      get: (projectId: string, id: string) => Effect.map(load(projectId, id), toView),
      remove: (projectId: string, id: string) =>
        repo.remove(projectId, id).pipe(
          Effect.tap((deleted) =>
            deleted
              ? events.publish({ projectId, type: "provider_connection.deleted", data: { connection_id: id } })
              : Effect.void
          ),
          repo.withTransaction,
          changed,
          Effect.orDie,
          Effect.flatMap((deleted) => deleted ? Effect.void : Effect.fail(ApiError.notFound("Provider connection"))),
          Effect.tap(() =>
            Effect.logInfo("provider connection deleted").pipe(
              Effect.annotateLogs({ project_id: projectId, connection_id: id })
            )
          )
        ),
      validate: (...args: Parameters<typeof validate>) => changed(validate(...args)),
      validateKey,
      sync: (...args: Parameters<typeof sync>) => changed(sync(...args)),
      listSyncs: (projectId: string, id: string, options: { limit?: number | undefined; cursor?: string | undefined }) =>
        Effect.gen(function*() {
          yield* load(projectId, id)
          const limit = options.limit ?? 20
          const after = options.cursor === undefined ? null : yield* decodeCursor(options.cursor)
          const rows = yield* repo.syncs(id, limit + 1, after).pipe(Effect.orDie)
          const page = rows.slice(0, limit)
          const last = page[page.length - 1]
          return {
            data: page.map(toSyncView),
            next_cursor: rows.length > limit && last ? encodeCursor({ micros: last.created_us, id: last.id }) : null
          }
        }),
      getSync: (projectId: string, id: string, syncId: string) =>
        Effect.gen(function*() {
          yield* load(projectId, id)
          const row = yield* repo.findSync(id, syncId).pipe(Effect.orDie)
          if (!row) return yield* ApiError.notFound("Model sync")
          return toSyncView(row)
        }),
      /** The newest active connection of the project for `provider`, with its decrypted key. */
      byokKey: (projectId: string, provider: string): Effect.Effect<Option.Option<ByokKey>> =>
        Effect.gen(function*() {
          const row = yield* active.get(`${projectId}\n${provider}`)
          if (!row) return Option.none()
          const apiKey = yield* box.decrypt(row.api_key_encrypted).pipe(Effect.orDie)
          return Option.some({ connectionId: row.id, apiKey, baseUrl: row.base_url, apiFormat: row.api_format })
        }),
      /** Every connection of the project (no keys), newest first. */
      connectionsOf: (projectId: string) => repo.listAll(projectId).pipe(Effect.orDie, Effect.map((rows) => rows.map(toView))),
      /** Synced models of the project's connections. */
      syncedModelsOf: (projectId: string): Effect.Effect<ReadonlyArray<SyncedModel>> =>
        repo.syncedModelsOfProject(projectId).pipe(
          Effect.orDie,
          Effect.map((rows) =>
            rows.map((m) => ({
              connectionId: m.connection_id,
              provider: m.provider,
              connectionStatus: m.status,
              modelId: m.model_id,
              name: m.name,
              ownedBy: m.owned_by,
              created: Number(m.created)
            }))
          )
        )
    }
  })
}) {}
