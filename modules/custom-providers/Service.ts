/**
 * Custom providers (contract §4.5): a project's own OpenAI- or Anthropic-format endpoints (self-hosted models,
 * compatible servers) and the model names that route to them. API keys are encrypted with the master key and
 * never leave the service except as `Redacted` to the gateway that calls the provider.
 */
import { FetchHttpClient } from "@effect/platform"
import { Duration, Effect, Option, Redacted } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { generateId, SecretBox } from "../../layers/crypto.ts"
import { makeLookupCache } from "../../layers/lookup-cache.ts"
import { checkBaseUrl, parseBaseUrl, requirePublicHost } from "../../layers/provider-url.ts"
import { ApiError } from "../../schemas/errors.ts"
import { probeChat, type ProbeResult } from "./Probe.ts"
import { type CustomModelRow, type CustomProviderRow, makeCustomProvidersRepo } from "./Repo.ts"

export type ApiFormat = "openai" | "anthropic"

export interface CustomModelView {
  readonly id: string
  readonly model_name: string
  readonly display_name: string
  readonly is_active: boolean
}

export interface CustomProviderView {
  readonly id: string
  readonly name: string
  readonly base_url: string
  readonly api_format: ApiFormat
  readonly is_active: boolean
  readonly has_api_key: boolean
  readonly created_at: string
  readonly updated_at: string
  readonly models: ReadonlyArray<CustomModelView>
}

/** What the gateway needs to call a custom provider for a requested model. */
export interface ResolvedCustomProvider {
  readonly providerId: string
  readonly name: string
  readonly baseUrl: string
  readonly apiFormat: ApiFormat
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** The model id to send upstream (the registered `modelId`). */
  readonly upstreamModel: string
}

export interface CreateCustomProvider {
  readonly name: string
  readonly baseUrl: string
  readonly apiKey?: string | undefined
  readonly format: ApiFormat
  readonly models?: ReadonlyArray<{ readonly name?: string | undefined; readonly modelId: string }> | undefined
}

export interface UpdateCustomProvider {
  readonly name?: string | undefined
  readonly baseUrl?: string | undefined
  readonly isActive?: boolean | undefined
  readonly format?: ApiFormat | undefined
  /** A new key, or null to remove the key. */
  readonly apiKey?: string | null | undefined
}

export interface TestConnectionInput {
  readonly provider_id?: string | undefined
  readonly base_url?: string | undefined
  readonly api_format?: ApiFormat | undefined
  readonly model?: string | undefined
  readonly api_key?: string | undefined
}

export const DEFAULT_TEST_MODEL = "gpt-3.5-turbo"
const MAX_MODELS = 200

const toModelView = (row: CustomModelRow): CustomModelView => ({
  id: row.id,
  model_name: row.model_name,
  display_name: row.display_name,
  is_active: row.is_active
})

const toView = (row: CustomProviderRow, models: ReadonlyArray<CustomModelRow>): CustomProviderView => ({
  id: row.id,
  name: row.name,
  base_url: row.base_url,
  api_format: row.api_format,
  is_active: row.is_active,
  has_api_key: row.api_key_encrypted !== null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  models: models.filter((m) => m.provider_id === row.id).map(toModelView)
})

const validName = (name: string) =>
  Effect.gen(function*() {
    const trimmed = name.trim()
    if (trimmed.length === 0 || trimmed.length > 100) {
      return yield* ApiError.badRequest("name must have 1 to 100 characters", { param: "name" })
    }
    // The name is also a model id for routing: keep it on one line.
    if (/[\u0000-\u001f\u007f]/.test(trimmed)) {
      return yield* ApiError.badRequest("name must not contain control characters", { param: "name" })
    }
    return trimmed
  })

export class CustomProviders extends Effect.Service<CustomProviders>()("CustomProviders", {
  effect: Effect.gen(function*() {
    const repo = yield* makeCustomProvidersRepo
    const box = yield* SecretBox
    const config = yield* AppConfig
    const httpLayer = FetchHttpClient.layer
    /** Active providers (oldest first) and their active models, per project: the routing table. */
    const routing = yield* makeLookupCache((projectId: string) =>
      Effect.gen(function*() {
        const providers = (yield* repo.listProviders(projectId).pipe(Effect.orDie)).filter((p) => p.is_active).reverse()
        const models = providers.length === 0
          ? []
          : (yield* repo.modelsOf(providers.map((p) => p.id)).pipe(Effect.orDie)).filter((m) => m.is_active)
        return { providers, models }
      })
    )

    const requireUniqueName = (projectId: string, name: string, exceptId: string | null) =>
      repo.nameTaken(projectId, name, exceptId).pipe(
        Effect.orDie,
        Effect.flatMap((taken) =>
          taken
            ? Effect.fail(ApiError.badRequest(`a provider named ${name} already exists in this project`, { param: "name" }))
            : Effect.void
        )
      )

    const load = (projectId: string, providerId: string) =>
      repo.findProvider(projectId, providerId).pipe(
        Effect.orDie,
        Effect.flatMap((row) => row ? Effect.succeed(row) : Effect.fail(ApiError.notFound("Provider")))
      )

    const view = (row: CustomProviderRow) =>
      repo.modelsOf([row.id]).pipe(Effect.orDie, Effect.map((models) => toView(row, models)))

    const decryptKey = (row: CustomProviderRow) =>
      row.api_key_encrypted === null
        ? Effect.succeed(Option.none<Redacted.Redacted>())
        : box.decrypt(row.api_key_encrypted).pipe(Effect.orDie, Effect.map(Option.some))

    const create = (projectId: string, input: CreateCustomProvider) =>
      Effect.gen(function*() {
        const name = yield* validName(input.name)
        const baseUrl = yield* checkBaseUrl(input.baseUrl, "baseUrl", config.allowPrivateProviderUrls)
        const models = input.models ?? []
        if (models.length > MAX_MODELS) {
          return yield* ApiError.badRequest(`at most ${MAX_MODELS} models per provider`, { param: "models" })
        }
        const modelRows: Array<{ id: string; model_name: string; display_name: string; position: number }> = []
        for (const [position, model] of models.entries()) {
          const modelId = model.modelId.trim()
          const display = (model.name ?? model.modelId).trim()
          if (modelId.length === 0 || modelId.length > 200 || display.length === 0 || display.length > 200) {
            return yield* ApiError.badRequest("each model needs a modelId and a name of 1 to 200 characters", {
              param: `models.${position}`
            })
          }
          modelRows.push({ id: generateId("cmod"), model_name: modelId, display_name: display, position })
        }
        const apiKey = input.apiKey?.trim()
        const id = generateId("cprov")
        return yield* repo.withTransaction(
          Effect.gen(function*() {
            yield* requireUniqueName(projectId, name, null)
            const row = yield* repo.insertProvider({
              id,
              project_id: projectId,
              name,
              base_url: baseUrl,
              api_format: input.format,
              api_key_encrypted: apiKey ? box.encrypt(apiKey) : null
            }).pipe(Effect.orDie)
            yield* repo.insertModels(modelRows.map((m) => ({ ...m, provider_id: id }))).pipe(Effect.orDie)
            return row
          })
        ).pipe(
          Effect.catchTag("SqlError", Effect.die),
          Effect.flatMap(view),
          Effect.tap((provider) =>
            Effect.logInfo("custom provider created").pipe(
              Effect.annotateLogs({ project_id: projectId, provider_id: provider.id, models: provider.models.length })
            )
          )
        )
      })

    /** Newest first, each with its models (active or not). */
    const list = (projectId: string) =>
      Effect.gen(function*() {
        const rows = yield* repo.listProviders(projectId).pipe(Effect.orDie)
        const models = yield* repo.modelsOf(rows.map((r) => r.id)).pipe(Effect.orDie)
        return rows.map((row) => toView(row, models))
      })

    const update = (projectId: string, providerId: string, patch: UpdateCustomProvider) =>
      Effect.gen(function*() {
        yield* load(projectId, providerId)
        const changes: {
          name?: string
          base_url?: string
          api_format?: string
          is_active?: boolean
          api_key_encrypted?: string | null
        } = {}
        if (patch.name !== undefined) {
          changes.name = yield* validName(patch.name)
          yield* requireUniqueName(projectId, changes.name, providerId)
        }
        if (patch.baseUrl !== undefined) {
          changes.base_url = yield* checkBaseUrl(patch.baseUrl, "baseUrl", config.allowPrivateProviderUrls)
        }
        if (patch.format !== undefined) changes.api_format = patch.format
        if (patch.isActive !== undefined) changes.is_active = patch.isActive
        if (patch.apiKey !== undefined) {
          const key = patch.apiKey?.trim()
          changes.api_key_encrypted = key ? box.encrypt(key) : null
        }
        const row = yield* repo.updateProvider(projectId, providerId, changes).pipe(Effect.orDie)
        if (!row) return yield* ApiError.notFound("Provider")
        yield* Effect.logInfo("custom provider updated").pipe(
          Effect.annotateLogs({ project_id: projectId, provider_id: providerId, fields: Object.keys(changes).join(",") })
        )
        return yield* view(row)
      })

    const remove = (projectId: string, providerId: string) =>
      repo.deleteProvider(projectId, providerId).pipe(
        Effect.orDie,
        Effect.flatMap((deleted) => deleted ? Effect.void : Effect.fail(ApiError.notFound("Provider"))),
        Effect.tap(() =>
          Effect.logInfo("custom provider deleted").pipe(
            Effect.annotateLogs({ project_id: projectId, provider_id: providerId })
          )
        )
      )

    const resolve = (projectId: string, modelOrProviderName: string) =>
      Effect.gen(function*() {
        const wanted = modelOrProviderName.trim().toLowerCase()
        if (wanted.length === 0) return Option.none<ResolvedCustomProvider>()
        // Oldest first, so routing does not change when a newer provider reuses a model name.
        const { models, providers } = yield* routing.get(projectId)
        if (providers.length === 0) return Option.none<ResolvedCustomProvider>()
        const firstModel = (providerId: string) => models.find((m) => m.provider_id === providerId)
        const match = (() => {
          const byName = providers.find((p) => p.name.toLowerCase() === wanted)
          if (byName) {
            const model = firstModel(byName.id)
            return model ? { provider: byName, model } : undefined
          }
          for (const field of ["model_name", "display_name"] as const) {
            for (const provider of providers) {
              const model = models.find((m) => m.provider_id === provider.id && m[field].toLowerCase() === wanted)
              if (model) return { provider, model }
            }
          }
          return undefined
        })()
        if (!match) return Option.none<ResolvedCustomProvider>()
        const apiKey = yield* decryptKey(match.provider)
        return Option.some<ResolvedCustomProvider>({
          providerId: match.provider.id,
          name: match.provider.name,
          baseUrl: match.provider.base_url,
          apiFormat: match.provider.api_format,
          apiKey,
          upstreamModel: match.model.model_name
        })
      })

    const testConnection = (projectId: string, input: TestConnectionInput) =>
      Effect.gen(function*() {
        const target = yield* (input.provider_id !== undefined
          ? Effect.gen(function*() {
            const row = yield* load(projectId, input.provider_id ?? "")
            const models = yield* repo.modelsOf([row.id]).pipe(Effect.orDie)
            const model = input.model?.trim() || models[0]?.model_name
            if (model === undefined) {
              return yield* ApiError.badRequest("the provider has no registered models; pass model", { param: "model" })
            }
            return { baseUrl: row.base_url, apiFormat: row.api_format, apiKey: yield* decryptKey(row), model }
          })
          : Effect.gen(function*() {
            if (input.base_url === undefined || input.base_url.trim().length === 0) {
              return yield* ApiError.badRequest("base_url is required when provider_id is not given", { param: "base_url" })
            }
            const baseUrl = yield* checkBaseUrl(input.base_url, "base_url", config.allowPrivateProviderUrls)
            const key = input.api_key?.trim()
            return {
              baseUrl,
              apiFormat: input.api_format ?? "openai",
              apiKey: key ? Option.some(Redacted.make(key)) : Option.none(),
              model: input.model?.trim() || DEFAULT_TEST_MODEL
            }
          }))
        if (!config.allowPrivateProviderUrls) {
          yield* requirePublicHost(yield* parseBaseUrl(target.baseUrl, "base_url"), "base_url")
        }
        const result: ProbeResult = yield* probeChat(target, Duration.millis(config.customProviderTestTimeoutMs)).pipe(
          Effect.provide(httpLayer)
        )
        yield* Effect.logInfo("custom provider test").pipe(
          Effect.annotateLogs({
            project_id: projectId,
            provider_id: input.provider_id ?? null,
            api_format: target.apiFormat,
            success: result.success,
            latency_ms: "latency_ms" in result ? result.latency_ms : null
          })
        )
        return result
      })

    const changed = <A, E>(projectId: string) => (effect: Effect.Effect<A, E>) =>
      Effect.tap(effect, () => routing.invalidate(projectId))

    return {
      create: (projectId: string, input: CreateCustomProvider) => create(projectId, input).pipe(changed(projectId)),
      list,
      get: (projectId: string, providerId: string) => Effect.flatMap(load(projectId, providerId), view),
      update: (projectId: string, providerId: string, patch: UpdateCustomProvider) =>
        update(projectId, providerId, patch).pipe(changed(projectId)),
      remove: (projectId: string, providerId: string) => remove(projectId, providerId).pipe(changed(projectId)),
      resolve,
      testConnection
    }
  })
}) {}
