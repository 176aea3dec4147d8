/**
 * Billing: per-project pricing settings, credit holds, and the usage ledger.
 *
 * - `authorize` reserves a call's estimated cost from a credit-gated project's balance in one conditional UPDATE,
 *   so concurrent calls can never overdraw it; `settle` returns the unused part of the hold.
 * - `record` queues a usage row; a background writer inserts queued rows in batches, off the request path, and
 *   the layer drains the queue before the database closes, so no row is lost on shutdown.
 */
import { Effect, Option, Queue, Ref, Schema } from "effect"
import { generateId } from "../../layers/crypto.ts"
import { makeLookupCache } from "../../layers/lookup-cache.ts"
import { ApiError } from "../../schemas/errors.ts"
import { billedAmount, type Cost, type KeySource } from "./cost.ts"
import { makeUsageRepo, type StoredUsageRow, type UsageRow } from "./Repo.ts"

export interface UsageRecord {
  readonly projectId: string
  readonly tenantId?: string | null
  readonly agentId?: string | null
  readonly sessionId?: string | null
  readonly requestId?: string | null
  /** `chat`, `vision`, `speech`, `transcription`, … */
  readonly kind: string
  readonly model: string
  readonly provider: string
  readonly keySource: KeySource
  readonly promptTokens?: number
  readonly completionTokens?: number
  readonly cachedTokens?: number
  readonly characters?: number
  readonly audioSeconds?: number
  readonly images?: number
  readonly cost: Cost
  /** `priced`, `unpriced` (no known price: flagged, cost null) or `custom` (the project's own endpoint). */
  readonly pricingStatus: "priced" | "unpriced" | "custom"
  readonly latencyMs: number
  readonly ttftMs?: number | null
  readonly status: "succeeded" | "failed" | "cancelled"
}

export interface Hold {
  readonly projectId: string
  readonly amount: number
}

export interface BillingSettings {
  readonly markupPercentage: number
  readonly creditGated: boolean
  readonly creditBalanceUsd: number
}

export const creditExhausted = () =>
  new ApiError({
    status: 403,
    type: "permission_error",
    code: "credit_balance_exhausted",
    message: "The project's credit balance is exhausted"
  })

export const unpricedRefused = (model: string) =>
  new ApiError({
    status: 403,
    type: "permission_error",
    code: "unpriced_model",
    message: `Model ${model} has no known price and this project is credit-gated`
  })

const toRow = (record: UsageRecord): UsageRow => ({
  id: generateId("usage"),
  project_id: record.projectId,
  tenant_id: record.tenantId ?? null,
  agent_id: record.agentId ?? null,
  session_id: record.sessionId ?? null,
  request_id: record.requestId ?? null,
  kind: record.kind,
  model: record.model,
  provider: record.provider,
  key_source: record.keySource,
  prompt_tokens: record.promptTokens ?? 0,
  completion_tokens: record.completionTokens ?? 0,
  cached_tokens: record.cachedTokens ?? 0,
  characters: record.characters ?? null,
  audio_seconds: record.audioSeconds ?? null,
  images: record.images ?? null,
  provider_cost_usd: record.cost.providerCostUsd,
  service_charge_usd: record.cost.serviceChargeUsd,
  markup_percentage: record.cost.markupPercentage,
  pricing_status: record.pricingStatus,
  latency_ms: Math.round(record.latencyMs),
  ttft_ms: record.ttftMs === null || record.ttftMs === undefined ? null : Math.round(record.ttftMs),
  status: record.status,
  created_at: new Date()
})

/** The wire shape of a usage row (`GET /v1/usage`). */
export const UsageEvent = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("usage_event"),
  kind: Schema.String,
  model: Schema.String,
  provider: Schema.String,
  key_source: Schema.String,
  tenant_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String),
  usage: Schema.Struct({
    promptTokens: Schema.Number,
    completionTokens: Schema.Number,
    totalTokens: Schema.Number,
    cacheReadTokens: Schema.Number,
    characters: Schema.NullOr(Schema.Number),
    audioSeconds: Schema.NullOr(Schema.Number),
    images: Schema.NullOr(Schema.Number)
  }),
  cost: Schema.Struct({
    providerCostUsd: Schema.NullOr(Schema.Number),
    serviceChargeUsd: Schema.Number,
    markupPercentage: Schema.Number
  }),
  pricing_status: Schema.String,
  latency_ms: Schema.Number,
  ttft_ms: Schema.NullOr(Schema.Number),
  status: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "UsageEvent" })

const toUsageEvent = (row: StoredUsageRow): typeof UsageEvent.Type => ({
  id: row.id,
  object: "usage_event",
  kind: row.kind,
  model: row.model,
  provider: row.provider,
  key_source: row.key_source,
  tenant_id: row.tenant_id,
  agent_id: row.agent_id,
  session_id: row.session_id,
  request_id: row.request_id,
  usage: {
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    totalTokens: row.prompt_tokens + row.completion_tokens,
    cacheReadTokens: row.cached_tokens,
    characters: row.characters,
    audioSeconds: row.audio_seconds === null ? null : Number(row.audio_seconds),
    images: row.images
  },
  cost: {
    providerCostUsd: row.provider_cost_usd === null ? null : Number(row.provider_cost_usd),
    serviceChargeUsd: Number(row.service_charge_usd),
    markupPercentage: Number(row.markup_percentage)
  },
  pricing_status: row.pricing_status,
  latency_ms: row.latency_ms,
  ttft_ms: row.ttft_ms,
  status: row.status,
  created_at: row.created_at.toISOString()
})

const encodeCursor = (row: StoredUsageRow) =>
  Buffer.from(`${row.created_at.toISOString()}|${row.id}`, "utf8").toString("base64url")

const decodeCursor = (cursor: string) => {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|")
  const date = new Date(at ?? "")
  return id && !Number.isNaN(date.getTime()) ? Option.some({ at: date, id }) : Option.none()
}

export class Billing extends Effect.Service<Billing>()("Billing", {
  scoped: Effect.gen(function*() {
    const repo = yield* makeUsageRepo
    const queue = yield* Queue.unbounded<UsageRow>()
    const pending = yield* Ref.make(0)

    const writeBatch = Effect.uninterruptibleMask((restore) =>
      restore(Queue.takeBetween(queue, 1, 500)).pipe(
        Effect.flatMap((batch) => {
          const rows = Array.from(batch)
          return repo.insertMany(rows).pipe(
            Effect.catchAll((error) => Effect.logError("usage batch insert failed", error.message)),
            Effect.ensuring(Ref.update(pending, (n) => n - rows.length))
          )
        })
      )
    )
    yield* Effect.forever(writeBatch).pipe(Effect.forkScoped)
    // Runs before the writer is interrupted and before the database closes: nothing queued is lost.
    yield* Effect.addFinalizer(() =>
      Queue.takeAll(queue).pipe(
        Effect.flatMap((rest) => repo.insertMany(Array.from(rest))),
        Effect.catchAll((error) => Effect.logError("usage drain failed", error.message))
      )
    )

    const toSettings = () =>
      (row: { readonly markup_percentage: string; readonly credit_gated: boolean; readonly credit_balance_usd: string } | undefined) =>
        row
          ? Effect.succeed<BillingSettings>({
            markupPercentage: Number(row.markup_percentage),
            creditGated: row.credit_gated,
            creditBalanceUsd: Number(row.credit_balance_usd)
          })
          : Effect.fail(ApiError.notFound("Project"))

    /** Current settings and balance, read from the database. */
    const settings = (projectId: string) => repo.settings(projectId).pipe(Effect.orDie, Effect.flatMap(toSettings()))

    /** Markup and gating, cached for the request path (the balance itself is only ever checked in SQL). */
    const cachedPolicy = yield* makeLookupCache((projectId: string) => repo.settings(projectId).pipe(Effect.orDie))
    const policy = (projectId: string): Effect.Effect<Pick<BillingSettings, "markupPercentage" | "creditGated">, ApiError> =>
      cachedPolicy.get(projectId).pipe(Effect.flatMap(toSettings()))

    return {
      settings,
      policy,

      /**
       * Before a billable call: refuses it on a credit-gated project whose balance cannot cover `estimateUsd`
       * (null = the model has no known price), else holds that amount. Non-managed keys are never held.
       */
      authorize: (projectId: string, options: { readonly model: string; readonly estimateUsd: number | null; readonly keySource: KeySource }) =>
        Effect.gen(function*() {
          const none: Hold = { projectId, amount: 0 }
          if (options.keySource !== "managed") return none
          const current = yield* policy(projectId)
          if (!current.creditGated) return none
          if (options.estimateUsd === null) return yield* unpricedRefused(options.model)
          const amount = Math.max(options.estimateUsd, 1e-8)
          const reserved = yield* repo.reserve(projectId, amount).pipe(Effect.orDie)
          if (!reserved) return yield* creditExhausted()
          return { projectId, amount } satisfies Hold
        }),

      /** After the call: debits exactly what it cost, returning the rest of the hold. */
      settle: (hold: Hold, cost: Cost, keySource: KeySource) => {
        const difference = hold.amount - billedAmount(cost, keySource)
        return hold.amount === 0 || difference === 0
          ? Effect.void
          : repo.refund(hold.projectId, difference).pipe(Effect.orDie)
      },

      record: (record: UsageRecord) =>
        Ref.update(pending, (n) => n + 1).pipe(Effect.zipRight(Queue.offer(queue, toRow(record))), Effect.asVoid),

      /** Waits until every queued row is written (tests, shutdown hooks). */
      flush: Effect.gen(function*() {
        while ((yield* Ref.get(pending)) > 0) yield* Effect.sleep("5 millis")
      }),

      configure: (projectId: string, options: { readonly markupPercentage?: number; readonly creditGated?: boolean; readonly creditBalanceUsd?: number }) =>
        repo.configure(projectId, options).pipe(Effect.orDie, Effect.zipRight(cachedPolicy.invalidate(projectId))),

      list: (projectId: string, options: { readonly limit: number; readonly cursor?: string | undefined }) =>
        Effect.gen(function*() {
          const before = options.cursor === undefined ? Option.none() : decodeCursor(options.cursor)
          if (options.cursor !== undefined && Option.isNone(before)) {
            return yield* ApiError.badRequest("cursor is not valid", { param: "cursor" })
          }
          const rows = yield* repo.list(projectId, { limit: options.limit + 1, before: Option.getOrUndefined(before) }).pipe(
            Effect.orDie
          )
          const page = rows.slice(0, options.limit)
          const last = page[page.length - 1]
          return {
            data: page.map(toUsageEvent),
            next_cursor: rows.length > options.limit && last ? encodeCursor(last) : null
          }
        })
    }
  })
}) {}
