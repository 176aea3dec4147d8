/** SQL for custom providers and their models. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type CustomProviderRow = {
  readonly id: string
  readonly project_id: string
  readonly name: string
  readonly base_url: string
  readonly api_format: "openai" | "anthropic"
  readonly api_key_encrypted: string | null
  readonly is_active: boolean
  readonly created_at: Date
  readonly updated_at: Date
}

export type CustomModelRow = {
  readonly id: string
  readonly provider_id: string
  readonly model_name: string
  readonly display_name: string
  readonly is_active: boolean
  readonly position: number
  readonly created_at: Date
}

export const makeCustomProvidersRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const modelsOf = (providerIds: ReadonlyArray<string>) =>
    providerIds.length === 0
      ? Effect.succeed<ReadonlyArray<CustomModelRow>>([])
      : sql<CustomModelRow>`
          SELECT * FROM custom_models WHERE ${sql.in("provider_id", providerIds)} ORDER BY provider_id, position, id`

  return {
    withTransaction: sql.withTransaction,
    insertProvider: (row: {
      id: string
      project_id: string
      name: string
      base_url: string
      api_format: string
      api_key_encrypted: string | null
    }) => sql<CustomProviderRow>`INSERT INTO custom_providers ${sql.insert(row)} RETURNING *`.pipe(
      Effect.map((rows) => rows[0]!)
    ),
    insertModels: (rows: ReadonlyArray<{
      id: string
      provider_id: string
      model_name: string
      display_name: string
      position: number
    }>) => rows.length === 0 ? Effect.void : sql`INSERT INTO custom_models ${sql.insert(rows)}`.pipe(Effect.asVoid),
    nameTaken: (projectId: string, name: string, exceptId: string | null) =>
      sql<{ readonly id: string }>`
        SELECT id FROM custom_providers
        WHERE project_id = ${projectId} AND lower(name) = lower(${name}) AND id <> ${exceptId ?? ""}`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),
    findProvider: (projectId: string, id: string) =>
      sql<CustomProviderRow>`SELECT * FROM custom_providers WHERE project_id = ${projectId} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      ),
    /** Newest first. */
    listProviders: (projectId: string) =>
      sql<CustomProviderRow>`
        SELECT * FROM custom_providers WHERE project_id = ${projectId} ORDER BY created_at DESC, id DESC`,
    modelsOf,
    updateProvider: (
      projectId: string,
      id: string,
      patch: Partial<{ name: string; base_url: string; api_format: string; is_active: boolean; api_key_encrypted: string | null }>
    ) =>
      sql<CustomProviderRow>`
        UPDATE custom_providers SET ${sql.update({ ...patch, updated_at: new Date() })}
        WHERE project_id = ${projectId} AND id = ${id} RETURNING *`.pipe(Effect.map((rows) => rows[0])),
    deleteProvider: (projectId: string, id: string) =>
      sql<{ readonly id: string }>`DELETE FROM custom_providers WHERE project_id = ${projectId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0)
      )
  }
})
