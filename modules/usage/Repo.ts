/** SQL for usage rows and project credit balances. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type UsageRow = {
  readonly id: string
  readonly project_id: string
  readonly tenant_id: string | null
  readonly agent_id: string | null
  readonly session_id: string | null
  readonly request_id: string | null
  readonly kind: string
  readonly model: string
  readonly provider: string
  readonly key_source: string
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly cached_tokens: number
  readonly characters: number | null
  readonly audio_seconds: number | null
  readonly images: number | null
  readonly provider_cost_usd: number | null
  readonly service_charge_usd: number
  readonly markup_percentage: number
  readonly pricing_status: string
  readonly latency_ms: number
  readonly ttft_ms: number | null
  readonly status: string
  readonly created_at: Date
}

export type StoredUsageRow = Omit<UsageRow, "audio_seconds" | "provider_cost_usd" | "service_charge_usd" | "markup_percentage"> & {
  readonly audio_seconds: string | null
  readonly provider_cost_usd: string | null
  readonly service_charge_usd: string
  readonly markup_percentage: string
}

export const makeUsageRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    insertMany: (rows: ReadonlyArray<UsageRow>) =>
      rows.length === 0 ? Effect.void : sql`INSERT INTO usage_events ${sql.insert(rows)}`.pipe(Effect.asVoid),

    list: (projectId: string, options: { readonly limit: number; readonly before?: { at: Date; id: string } | undefined }) =>
      options.before
        ? sql<StoredUsageRow>`
            SELECT * FROM usage_events
            WHERE project_id = ${projectId} AND (created_at, id) < (${options.before.at}, ${options.before.id})
            ORDER BY created_at DESC, id DESC LIMIT ${options.limit}`
        : sql<StoredUsageRow>`
            SELECT * FROM usage_events WHERE project_id = ${projectId}
            ORDER BY created_at DESC, id DESC LIMIT ${options.limit}`,

    settings: (projectId: string) =>
      sql<{ readonly markup_percentage: string; readonly credit_gated: boolean; readonly credit_balance_usd: string }>`
        SELECT markup_percentage, credit_gated, credit_balance_usd FROM projects WHERE id = ${projectId}`.pipe(
        Effect.map((rows) => rows[0])
      ),

    /** Takes `amount` from a gated project's balance only if it covers it; false when it does not. */
    reserve: (projectId: string, amount: number) =>
      sql<{ readonly id: string }>`
        UPDATE projects SET credit_balance_usd = credit_balance_usd - ${amount}
        WHERE id = ${projectId} AND credit_balance_usd >= ${amount} AND credit_balance_usd > 0
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),

    refund: (projectId: string, amount: number) =>
      sql`UPDATE projects SET credit_balance_usd = credit_balance_usd + ${amount} WHERE id = ${projectId}`.pipe(
        Effect.asVoid
      ),

    configure: (
      projectId: string,
      settings: { readonly markupPercentage?: number; readonly creditGated?: boolean; readonly creditBalanceUsd?: number }
    ) =>
      sql`
        UPDATE projects SET
          markup_percentage = coalesce(${settings.markupPercentage ?? null}, markup_percentage),
          credit_gated = coalesce(${settings.creditGated ?? null}, credit_gated),
          credit_balance_usd = coalesce(${settings.creditBalanceUsd ?? null}, credit_balance_usd),
          updated_at = now()
        WHERE id = ${projectId}`.pipe(Effect.asVoid)
  }
})
