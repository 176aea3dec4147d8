/** SQL for provider connections, their synced models and the sync log. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type ConnectionRow = {
  readonly id: string
  readonly project_id: string
  readonly name: string
  readonly provider: string
  readonly api_format: string
  readonly base_url: string | null
  readonly api_key_encrypted: string
  readonly status: string
  readonly last_tested_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

export type SyncedModelRow = {
  readonly connection_id: string
  readonly model_id: string
  readonly name: string
  readonly owned_by: string | null
  readonly created: string
}

export type SyncedModelWithConnection = SyncedModelRow & {
  readonly provider: string
  readonly status: string
}

export type SyncRow = {
  readonly id: string
  readonly connection_id: string
  readonly status: string
  readonly counts: unknown
  readonly changes: unknown
  readonly error: string | null
  readonly created_at: Date
}

/** A position in a newest-first list: the creation time in microseconds (exact, unlike a JS Date) and the id. */
export interface Keyset {
  readonly micros: string
  readonly id: string
}

type Paged = { readonly created_us: string }

export const makeConnectionsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const MICROS = sql.literal("(extract(epoch from created_at) * 1000000)::bigint")
  return {
    withTransaction: sql.withTransaction,
    insert: (row: {
      id: string
      project_id: string
      name: string
      provider: string
      api_format: string
      base_url: string | null
      api_key_encrypted: string
    }) => sql<ConnectionRow>`INSERT INTO provider_connections ${sql.insert(row)} RETURNING *`.pipe(
      Effect.map((rows) => rows[0]!)
    ),
    find: (projectId: string, id: string) =>
      sql<ConnectionRow>`SELECT * FROM provider_connections WHERE project_id = ${projectId} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      ),
    /** Newest first, after the keyset cursor (creation time in microseconds, id) when given. */
    page: (projectId: string, limit: number, after: Keyset | null) =>
      sql<ConnectionRow & Paged>`
        SELECT *, ${MICROS} AS created_us FROM provider_connections
        WHERE project_id = ${projectId}
          ${after === null ? sql`` : sql`AND (${MICROS}, id) < (${after.micros}::bigint, ${after.id})`}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    listAll: (projectId: string) =>
      sql<ConnectionRow>`
        SELECT * FROM provider_connections WHERE project_id = ${projectId} ORDER BY created_at DESC, id DESC`,
    newestActive: (projectId: string, provider: string) =>
      sql<ConnectionRow>`
        SELECT * FROM provider_connections
        WHERE project_id = ${projectId} AND lower(provider) = lower(${provider}) AND status = 'active'
        ORDER BY created_at DESC, id DESC LIMIT 1`.pipe(Effect.map((rows) => rows[0])),
    setTested: (id: string, status: string | null, at: Date) =>
      status === null
        ? sql`UPDATE provider_connections SET last_tested_at = ${at}, updated_at = ${at} WHERE id = ${id}`
        : sql`UPDATE provider_connections SET last_tested_at = ${at}, status = ${status}, updated_at = ${at} WHERE id = ${id}`,
    remove: (projectId: string, id: string) =>
      sql<{ readonly id: string }>`
        DELETE FROM provider_connections WHERE project_id = ${projectId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),
    syncedModels: (connectionId: string) =>
      sql<SyncedModelRow>`
        SELECT connection_id, model_id, name, owned_by, created::text AS created
        FROM provider_models WHERE connection_id = ${connectionId} ORDER BY model_id`,
    /** Synced models of every connection of the project, with the connection's provider and status. */
    syncedModelsOfProject: (projectId: string) =>
      sql<SyncedModelWithConnection>`
        SELECT m.connection_id, m.model_id, m.name, m.owned_by, m.created::text AS created, c.provider, c.status
        FROM provider_models m JOIN provider_connections c ON c.id = m.connection_id
        WHERE c.project_id = ${projectId}
        ORDER BY c.provider, m.model_id, c.created_at DESC`,
    deleteModels: (connectionId: string, modelIds: ReadonlyArray<string>) =>
      modelIds.length === 0
        ? Effect.void
        : sql`DELETE FROM provider_models WHERE connection_id = ${connectionId} AND ${sql.in("model_id", modelIds)}`.pipe(
          Effect.asVoid
        ),
    upsertModels: (rows: ReadonlyArray<{ connection_id: string; model_id: string; name: string; owned_by: string | null; created: number }>, at: Date) =>
      Effect.forEach(rows, (row) =>
        sql`
          INSERT INTO provider_models (connection_id, model_id, name, owned_by, created, synced_at)
          VALUES (${row.connection_id}, ${row.model_id}, ${row.name}, ${row.owned_by}, ${row.created}, ${at})
          ON CONFLICT (connection_id, model_id)
          DO UPDATE SET name = EXCLUDED.name, owned_by = EXCLUDED.owned_by, created = EXCLUDED.created,
            synced_at = EXCLUDED.synced_at`, { discard: true }),
    insertSync: (row: { id: string; connection_id: string; status: string; counts: string; changes: string; error: string | null }) =>
      sql<SyncRow>`
        INSERT INTO provider_model_syncs (id, connection_id, status, counts, changes, error)
        VALUES (${row.id}, ${row.connection_id}, ${row.status}, ${row.counts}::jsonb, ${row.changes}::jsonb, ${row.error})
        RETURNING *`.pipe(Effect.map((rows) => rows[0]!)),
    syncs: (connectionId: string, limit: number, after: Keyset | null) =>
      sql<SyncRow & Paged>`
        SELECT *, ${MICROS} AS created_us FROM provider_model_syncs
        WHERE connection_id = ${connectionId}
          ${after === null ? sql`` : sql`AND (${MICROS}, id) < (${after.micros}::bigint, ${after.id})`}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    findSync: (connectionId: string, id: string) =>
      sql<SyncRow>`SELECT * FROM provider_model_syncs WHERE connection_id = ${connectionId} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      )
  }
})
