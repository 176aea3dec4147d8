/** SQL for projects. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type ProjectRow = {
  readonly id: string
  readonly name: string
  readonly markup_percentage: string
  readonly credit_gated: boolean
  readonly credit_balance_usd: string
  readonly created_at: Date
  readonly updated_at: Date
}

export const makeProjectsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    insert: (row: { id: string; name: string }) =>
      sql<ProjectRow>`INSERT INTO projects ${sql.insert(row)} RETURNING *`.pipe(Effect.map((rows) => rows[0]!)),
    findById: (id: string) =>
      sql<ProjectRow>`SELECT * FROM projects WHERE id = ${id}`.pipe(Effect.map((rows) => rows[0])),
    list: sql<ProjectRow>`SELECT * FROM projects ORDER BY created_at, id`,
    count: sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM projects`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0)
    ),
    withTransaction: sql.withTransaction
  }
})
