import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Voice rate limiting (60 requests per minute per project) shared by every server process: one row per project
 * and minute window, incremented by an atomic upsert.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE voice_rate_windows (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      window_start timestamptz NOT NULL,
      requests integer NOT NULL,
      PRIMARY KEY (project_id, window_start)
    )`
})
