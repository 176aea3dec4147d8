/** SQL of the domain event outbox. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface DomainEventRow {
  readonly id: string
  readonly project_id: string
  readonly type: string
  readonly data: unknown
  readonly created_at: Date
}

export const makeEventsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    /** `data` is JSON text; the column is jsonb. */
    insert: (row: { id: string; project_id: string; type: string; data: string; created_at: Date }) =>
      sql`INSERT INTO domain_events ${sql.insert(row)}`.pipe(Effect.asVoid),
    find: (projectId: string, id: string) =>
      sql<DomainEventRow>`SELECT * FROM domain_events WHERE project_id = ${projectId} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      )
  }
})
